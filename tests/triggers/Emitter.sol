// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

/// Emits the logs the chain watcher's tests and backfill benchmark watch
/// (tests/triggers/chain_watcher_test.cpp, bench/chain_backfill.cpp): indexed static and dynamic
/// arguments, and a batch form that emits many logs in one transaction.
contract Emitter {
    event Ping(address indexed from, uint256 indexed id, string note, uint256 amount);
    event Tagged(bytes32 indexed tag, string indexed label, bool flag, int64 delta);

    function ping(uint256 id, string calldata note, uint256 amount) external {
        emit Ping(msg.sender, id, note, amount);
    }

    function tagged(bytes32 tag, string calldata label, bool flag, int64 delta) external {
        emit Tagged(tag, label, flag, delta);
    }

    /// `count` Ping logs with ids first, first + 1, ...
    function pingMany(uint256 first, uint256 count) external {
        for (uint256 i = 0; i < count; ++i) {
            emit Ping(msg.sender, first + i, "batch", i);
        }
    }
}
