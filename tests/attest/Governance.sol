// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

/// The smallest application contract the governance check (docs/protocol.md §5, check 4) reads:
/// allowedComposeHashes(bytes32). A production contract restricts `allow` to
/// a multisig; this test contract lets anyone allow a hash.
contract Governance {
    mapping(bytes32 => bool) public allowedComposeHashes;

    function allow(bytes32 h) external {
        allowedComposeHashes[h] = true;
    }
}
