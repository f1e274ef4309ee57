// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title The permission registry's interface (docs/protocol.md §3, docs/architecture.md §4 "Permission ledger").
/// @notice Authorization state of every account: admin wallet and mode, usage keys with their
/// permission sets, groups, the PKP registry and action metadata: permissions only. Credits,
/// payments and what a call costs are kept off the chain by the server's metering store
/// (docs/architecture.md §4), so nothing here moves credits. Function
/// names and parameter types of the production registry are kept (setUsageApiKey,
/// registerWalletDerivation, convertToChainSecured, ...) so that clients of either speak one ABI.
///
/// Sender rule of every account write: msg.sender is the account's admin, or one of the
/// registry's api payers when the account is managed (API mode); an api payer writing for an
/// unmanaged (ChainSecured) account reverts RelayNotAllowed, anyone else NotAdmin.
///
/// Every account write emits exactly one event named after it; the event's parameter names are
/// the keys of the server's ledger event (`enact::ledger::event::data`). ApiPayerSet is the
/// registry's administration log, which the ledger's event stream does not count.
///
/// Strings are bounded: name 1..256 bytes, description ≤ 4096, email ≤ 256, cid 1..256; longer or empty-where-required → InvalidArgument.
/// Lists keep creation order (removal preserves the order of the rest). Group ids are assigned
/// 1, 2, 3, … per account and never reused; 0 is the scope wildcard and never a group.
interface IPermissionRegistry {
    // --- types -----------------------------------------------------------------------------
    struct Permissions {
        bool canCreateGroups;
        bool canDeleteGroups;
        bool canCreatePkps;
        uint256[] manageIpfsIdsInGroups;
        uint256[] addPkpToGroups;
        uint256[] removePkpFromGroups;
        uint256[] executeInGroups;
    }

    struct AccountView {
        uint256 accountHash;
        address admin;
        bool managed;
        string name;
        string description;
        string email;
        uint256 createdAt;
        uint256 walletCount;    // wallets ever registered (next API-mode derivation index)
    }

    struct UsageKeyView {
        uint256 accountHash;
        uint256 usageKeyHash;
        address wallet;         // zero when registered through the 7-argument setUsageApiKey
        uint256 expiration;     // unix seconds, 0 = never
        uint256 balance;
        string name;
        string description;
        Permissions permissions;
        uint256 createdAt;
    }

    struct GroupView {
        uint256 groupId;
        string name;
        string description;
        address[] pkpIds;
        uint256[] cidHashes;
    }

    struct WalletView {
        address wallet;
        uint256 derivationPath;
        string name;
        string description;
        uint256 createdAt;
    }

    struct ActionView {
        uint256 hashedCid;
        string cid;             // empty, with empty metadata, for a group's unregistered hash
        string name;
        string description;
        uint256 createdAt;
    }

    // --- errors (the server maps each to a ledger_errc, docs/protocol.md §0) ---------------------------
    error NotAdmin(uint256 accountHash, address sender);
    error RelayNotAllowed(uint256 accountHash, address sender);
    error AlreadyUnmanaged(uint256 accountHash);
    error UnknownAccount(uint256 accountHash);
    error UnknownUsageKey(uint256 accountHash, uint256 usageKeyHash);
    error UnknownGroup(uint256 accountHash, uint256 groupId);
    error UnknownWallet(uint256 accountHash, address wallet);
    error UnknownAction(uint256 accountHash, uint256 hashedCid);
    error Duplicate(string what);
    error InvalidArgument(string reason);
    error NotOwner(address sender);
    // Identity rules (docs/protocol.md §3). A wallet creates only its own account, unmanaged, under the
    // hash every client derives from its address; account hashes and usage-key hashes are one
    // namespace, so no key can be made to authenticate as an account it does not belong to.
    /// newAccount by a wallet (not an api payer): apiKeyHash != keccak256(abi.encodePacked(admin)).
    error AccountHashNotCanonical(uint256 apiKeyHash, address admin);
    /// newAccount by a wallet (not an api payer) with managed = true.
    error ManagedNotAllowed(uint256 apiKeyHash, address sender);
    /// newAccount with a hash that is a usage key (of any account).
    error HashIsUsageKey(uint256 apiKeyHash);
    /// setUsageApiKey with a hash that is an account.
    error HashIsAccount(uint256 usageKeyHash);
    /// setUsageApiKey with the hash of a usage key that another account holds.
    error UsageKeyOfAnotherAccount(uint256 accountHash, uint256 usageKeyHash);
    /// convertToChainSecured by the admin (not an api payer) naming another wallet: an account is
    /// handed to a wallet only with its consent, which an api payer's relay carries (the server
    /// checked the new admin's ConvertAccount envelope); the admin converts only to itself.
    error NewAdminNotSender(uint256 accountHash, address newAdmin);

    // --- events (ledger events; parameter names = ledger event data keys) --------------------
    event AccountCreated(uint256 indexed accountHash, address adminWalletAddress, bool managed, string name, string description);
    event AccountConverted(uint256 indexed accountHash, address previousAdmin, address newAdmin);
    event UsageApiKeySet(uint256 indexed accountHash, uint256 usageKeyHash, address wallet, uint256 expiration, uint256 balance, string name, string description, Permissions permissions);
    event UsageApiKeyMetadataUpdated(uint256 indexed accountHash, uint256 usageKeyHash, string name, string description);
    event UsageApiKeyRemoved(uint256 indexed accountHash, uint256 usageKeyHash);
    event GroupAdded(uint256 indexed accountHash, uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes);
    event GroupUpdated(uint256 indexed accountHash, uint256 groupId, string name, string description, address[] pkpIds, uint256[] cidHashes);
    event GroupRemoved(uint256 indexed accountHash, uint256 groupId);
    event PkpAddedToGroup(uint256 indexed accountHash, uint256 groupId, address pkpId);
    event PkpRemovedFromGroup(uint256 indexed accountHash, uint256 groupId, address pkpId);
    event ActionAddedToGroup(uint256 indexed accountHash, uint256 groupId, uint256 hashedCid);
    event ActionRemovedFromGroup(uint256 indexed accountHash, uint256 groupId, uint256 hashedCid);
    event WalletDerivationRegistered(uint256 indexed accountHash, address wallet, uint256 derivationPath, string name, string description);
    event ActionAdded(uint256 indexed accountHash, uint256 hashedCid, string cid, string name, string description);
    event ActionMetadataUpdated(uint256 indexed accountHash, uint256 hashedCid, string name, string description);
    event ActionDeleted(uint256 indexed accountHash, uint256 hashedCid);
    // registry administration log, not a ledger event
    event ApiPayerSet(address indexed payer, bool allowed);

    // --- registry administration ---------------------------------------------------------------
    // constructor(address[] memory apiPayers): the deployer becomes the owner.
    function owner() external view returns (address);
    function apiPayers() external view returns (address[] memory);
    function isApiPayer(address who) external view returns (bool);
    /// Owner only (NotOwner).
    function setApiPayer(address payer, bool allowed) external;

    // --- accounts --------------------------------------------------------------------------------
    /// Sender rule applied to `admin` and `managed` of the new account (so a wallet that is not an
    /// api payer may only name itself: NotAdmin otherwise); then, for such a wallet, the identity
    /// rule: ManagedNotAllowed, AccountHashNotCanonical. InvalidArgument for a zero admin.
    /// Duplicate when the hash exists, HashIsUsageKey when it is a usage key, Duplicate when
    /// `admin` administers another account.
    function newAccount(uint256 apiKeyHash, address admin, bool managed, string calldata name, string calldata description, string calldata email) external;
    /// One-way: admin := newAdmin, managed := false. Sender rule, then InvalidArgument for zero,
    /// AlreadyUnmanaged the second time, NewAdminNotSender when a sender that is not an api payer
    /// names another wallet (the admin converts only to itself), Duplicate when newAdmin
    /// administers another account.
    function convertToChainSecured(uint256 accountHash, address newAdmin) external;
    function getAccount(uint256 accountHash) external view returns (AccountView memory);      // UnknownAccount
    function accountByAdmin(address admin) external view returns (AccountView memory);       // UnknownAccount

    // --- usage keys ------------------------------------------------------------------------------
    /// Inserts or replaces every field of the key (replacing keeps the hash: how an update works).
    /// HashIsAccount when the hash is an account's, UsageKeyOfAnotherAccount when another account
    /// holds a key with this hash.
    function setUsageApiKey(uint256 accountHash, uint256 usageKeyHash, uint256 expiration, uint256 balance, string calldata name, string calldata description, Permissions calldata p) external;
    /// The same, recording the key's own wallet address.
    function setUsageApiKey(uint256 accountHash, uint256 usageKeyHash, uint256 expiration, uint256 balance, string calldata name, string calldata description, Permissions calldata p, address wallet) external;
    function updateUsageApiKeyMetadata(uint256 accountHash, uint256 usageKeyHash, string calldata name, string calldata description) external;
    function removeUsageApiKey(uint256 accountHash, uint256 usageKeyHash) external;
    /// Any account's key by its hash (authentication). UnknownUsageKey(0, hash) when none.
    function getUsageApiKey(uint256 usageKeyHash) external view returns (UsageKeyView memory);
    function listUsageApiKeys(uint256 accountHash, uint256 offset, uint256 limit) external view returns (UsageKeyView[] memory items, uint256 total);

    // --- groups ----------------------------------------------------------------------------------
    /// Every PKP must be registered in the account (UnknownWallet); duplicates in a set → InvalidArgument.
    function addGroup(uint256 accountHash, string calldata name, string calldata description, address[] calldata pkpIds, uint256[] calldata cidHashes) external returns (uint256 groupId);
    function updateGroup(uint256 accountHash, uint256 groupId, string calldata name, string calldata description, address[] calldata pkpIds, uint256[] calldata cidHashes) external;
    function removeGroup(uint256 accountHash, uint256 groupId) external;
    /// Duplicate when the PKP is in the group already; UnknownWallet when not registered.
    function addPkpToGroup(uint256 accountHash, uint256 groupId, address pkpId) external;
    /// UnknownWallet when the PKP is not in the group.
    function removePkpFromGroup(uint256 accountHash, uint256 groupId, address pkpId) external;
    /// Duplicate when the hash is in the group already (the action need not be registered).
    function addActionToGroup(uint256 accountHash, uint256 groupId, uint256 hashedCid) external;
    /// UnknownAction when the hash is not in the group.
    function removeActionFromGroup(uint256 accountHash, uint256 groupId, uint256 hashedCid) external;
    function getGroup(uint256 accountHash, uint256 groupId) external view returns (GroupView memory);
    function listGroups(uint256 accountHash, uint256 offset, uint256 limit) external view returns (GroupView[] memory items, uint256 total);

    // --- PKP registry ----------------------------------------------------------------------------
    /// Duplicate when the wallet is registered in the account already.
    function registerWalletDerivation(uint256 adminHash, address wallet, uint256 derivationPath, string calldata name, string calldata description) external;
    function getWallet(uint256 accountHash, address wallet) external view returns (WalletView memory);
    function listWallets(uint256 accountHash, uint256 offset, uint256 limit) external view returns (WalletView[] memory items, uint256 total);
    function listWalletsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 limit) external view returns (WalletView[] memory items, uint256 total);

    // --- actions ---------------------------------------------------------------------------------
    /// InvalidArgument unless hashedCid == uint256(keccak256(bytes(cid))); Duplicate when registered.
    function addAction(uint256 accountHash, uint256 hashedCid, string calldata cid, string calldata name, string calldata description) external;
    function updateActionMetadata(uint256 accountHash, uint256 hashedCid, string calldata name, string calldata description) external;
    /// Removes the metadata and the hash from every group of the account.
    function deleteAction(uint256 accountHash, uint256 hashedCid) external;
    function getAction(uint256 accountHash, uint256 hashedCid) external view returns (ActionView memory);
    function listActions(uint256 accountHash, uint256 offset, uint256 limit) external view returns (ActionView[] memory items, uint256 total);
    function listActionsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 limit) external view returns (ActionView[] memory items, uint256 total);

    // --- batching --------------------------------------------------------------------------------
    /// Runs each call on this contract with the same msg.sender (delegatecall to self), all or
    /// nothing; a failing call's revert data is re-thrown unchanged.
    function multicall(bytes[] calldata calls) external returns (bytes[] memory results);
}
