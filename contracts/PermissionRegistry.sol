// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.37;

import {IPermissionRegistry} from "./IPermissionRegistry.sol";

/// @title The permission registry (docs/protocol.md §3, docs/architecture.md §4 "Permission ledger").
/// @notice Implements IPermissionRegistry with the rules of the embedded ledger
/// (server/ledger/embedded_ledger.hpp), so that one conformance suite passes on both backends:
///   - a write checks, in order: the account exists (UnknownAccount), the sender rule (NotAdmin /
///     RelayNotAllowed), its arguments (InvalidArgument), then the state (Unknown* / Duplicate /
///     AlreadyUnmanaged); a failing call changes nothing;
///   - identity rules (docs/protocol.md §3): newAccount from a sender that is not an api payer (so, past the
///     sender rule, the admin itself) must be unmanaged (ManagedNotAllowed) and under
///     keccak256(abi.encodePacked(admin)) (AccountHashNotCanonical), checked before its arguments;
///     account hashes and usage-key hashes are one namespace (HashIsUsageKey, HashIsAccount,
///     UsageKeyOfAnotherAccount), checked with the state;
///   - the registry keeps permissions only: credits, payments and the charge of a call are the
///     server's metering store (docs/architecture.md §4), so no function here moves credits and a
///     run or a relayed write leaves nothing on the chain but the write itself;
///   - views are open to anyone.
/// Storage: lists that lose members in the middle (usage keys, actions, a group's PKPs and CID
/// hashes) are arrays shifted on removal, so creation order holds and pages are direct slices;
/// wallets are never removed; groups are found by id (1 … groupCount, never reused) and a removed
/// group leaves a gap, so adding a group writes no list at all (listGroups and deleteAction step
/// over the gaps: their cost grows with the groups ever created, not only the live ones).
contract PermissionRegistry is IPermissionRegistry {
    uint256 private constant MAX_NAME = 256;
    uint256 private constant MAX_DESCRIPTION = 4096;
    uint256 private constant MAX_EMAIL = 256;
    uint256 private constant MAX_CID = 256;

    struct Account {
        address admin; // zero: no such account (a zero admin is refused)
        bool managed;
        uint64 createdAt;
        uint64 groupCount; // the last group id assigned
        uint64 liveGroups;
        string name;
        string description;
        string email;
        uint256[] usageKeys; // creation order
        uint256[] actions; // creation order
        address[] wallets; // registration order; never shrinks
    }

    struct UsageKey {
        uint256 accountHash;
        address wallet;
        uint64 createdAt; // zero: no such key
        uint256 expiration;
        uint256 balance;
        string name;
        string description;
        Permissions permissions;
    }

    struct Group {
        uint64 createdAt; // zero: no such group
        string name;
        string description;
        address[] pkps;
        uint256[] cids;
    }

    struct Wallet {
        uint256 derivationPath;
        uint64 createdAt; // zero: not registered
        string name;
        string description;
    }

    struct Action {
        uint64 createdAt; // zero: not registered
        string cid;
        string name;
        string description;
    }

    address public override owner;
    mapping(address => bool) public override isApiPayer;
    address[] private _apiPayers;

    mapping(uint256 => Account) private _accounts;
    mapping(address => uint256) private _accountOf; // admin -> account hash (checked against it)
    mapping(uint256 => UsageKey) private _keys;
    mapping(uint256 => mapping(uint256 => Group)) private _groups;
    mapping(uint256 => mapping(address => Wallet)) private _wallets;
    mapping(uint256 => mapping(uint256 => Action)) private _actions;

    constructor(address[] memory apiPayers_) {
        owner = msg.sender;
        for (uint256 i; i < apiPayers_.length; ++i) _setApiPayer(apiPayers_[i], true);
    }

    // --- registry administration ---------------------------------------------------------------

    function apiPayers() external view override returns (address[] memory) {
        return _apiPayers;
    }

    function setApiPayer(address payer, bool allowed) external override {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _setApiPayer(payer, allowed);
    }

    function _setApiPayer(address payer, bool allowed) private {
        if (payer == address(0)) _invalid("payer: zero address");
        if (allowed != isApiPayer[payer]) {
            isApiPayer[payer] = allowed;
            if (allowed) {
                _apiPayers.push(payer);
            } else {
                _removeAt(_apiPayers, _indexOf(_apiPayers, payer));
            }
        }
        emit ApiPayerSet(payer, allowed);
    }

    // --- accounts --------------------------------------------------------------------------------

    function newAccount(
        uint256 apiKeyHash,
        address admin,
        bool managed,
        string calldata name,
        string calldata description,
        string calldata email
    ) external override {
        _checkSender(apiKeyHash, admin, managed);
        // docs/protocol.md §3 identity rules: a wallet (past _checkSender, it is `admin`) creates only its
        // own ChainSecured account under the hash every client derives from its address, so no one
        // squats another wallet's account or creates one under a hash of its choosing.
        if (!isApiPayer[msg.sender]) {
            if (managed) revert ManagedNotAllowed(apiKeyHash, msg.sender);
            if (apiKeyHash != uint256(keccak256(abi.encodePacked(admin)))) revert AccountHashNotCanonical(apiKeyHash, admin);
        }
        if (admin == address(0)) _invalid("admin: zero address");
        _checkMetadata(name, description);
        _checkText(email, MAX_EMAIL, false, "email");
        Account storage a = _accounts[apiKeyHash];
        if (a.admin != address(0)) revert Duplicate("apiKeyHash");
        // One namespace: an account under a usage key's hash would take that key over.
        if (_keys[apiKeyHash].createdAt != 0) revert HashIsUsageKey(apiKeyHash);
        if (_administers(admin)) revert Duplicate("admin");
        a.admin = admin;
        a.managed = managed;
        a.createdAt = uint64(block.timestamp);
        a.name = name;
        a.description = description;
        a.email = email;
        _accountOf[admin] = apiKeyHash;
        emit AccountCreated(apiKeyHash, admin, managed, name, description);
    }

    function convertToChainSecured(uint256 accountHash, address newAdmin) external override {
        Account storage a = _writable(accountHash);
        if (newAdmin == address(0)) _invalid("newAdmin: zero address");
        if (!a.managed) revert AlreadyUnmanaged(accountHash);
        // Consent of the new admin: the admin itself, or an api payer's relay (the server checked
        // the new admin's signature); otherwise a wallet would get an account it never asked for.
        if (newAdmin != msg.sender && !isApiPayer[msg.sender]) revert NewAdminNotSender(accountHash, newAdmin);
        address previous = a.admin;
        if (newAdmin != previous && _administers(newAdmin)) revert Duplicate("newAdmin");
        delete _accountOf[previous];
        a.admin = newAdmin;
        a.managed = false;
        _accountOf[newAdmin] = accountHash;
        emit AccountConverted(accountHash, previous, newAdmin);
    }

    function getAccount(uint256 accountHash) external view override returns (AccountView memory) {
        return _accountView(accountHash);
    }

    function accountByAdmin(address admin) external view override returns (AccountView memory) {
        if (admin == address(0) || !_administers(admin)) revert UnknownAccount(0);
        return _accountView(_accountOf[admin]);
    }

    function _accountView(uint256 h) private view returns (AccountView memory) {
        Account storage a = _account(h);
        return AccountView(h, a.admin, a.managed, a.name, a.description, a.email, a.createdAt, a.wallets.length);
    }

    // --- usage keys ------------------------------------------------------------------------------

    function setUsageApiKey(
        uint256 accountHash,
        uint256 usageKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        Permissions calldata p
    ) external override {
        _setUsageKey(accountHash, usageKeyHash, expiration, balance, name, description, p, address(0));
    }

    function setUsageApiKey(
        uint256 accountHash,
        uint256 usageKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        Permissions calldata p,
        address wallet
    ) external override {
        _setUsageKey(accountHash, usageKeyHash, expiration, balance, name, description, p, wallet);
    }

    /// Inserts, or replaces every field of the key while keeping its creation time and position.
    function _setUsageKey(
        uint256 h,
        uint256 kh,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        Permissions calldata p,
        address wallet
    ) private {
        Account storage a = _writable(h);
        _checkMetadata(name, description);
        // One namespace (docs/protocol.md §3): a key under an account's hash, or under another account's
        // key hash, would make that credential authenticate here.
        if (_accounts[kh].admin != address(0)) revert HashIsAccount(kh);
        UsageKey storage k = _keys[kh];
        if (k.createdAt == 0) {
            k.accountHash = h;
            k.createdAt = uint64(block.timestamp);
            a.usageKeys.push(kh);
        } else if (k.accountHash != h) {
            revert UsageKeyOfAnotherAccount(h, kh);
        }
        k.wallet = wallet;
        k.expiration = expiration;
        k.balance = balance;
        k.name = name;
        k.description = description;
        k.permissions = p;
        emit UsageApiKeySet(h, kh, wallet, expiration, balance, name, description, p);
    }

    function updateUsageApiKeyMetadata(
        uint256 accountHash,
        uint256 usageKeyHash,
        string calldata name,
        string calldata description
    ) external override {
        _writable(accountHash);
        _checkMetadata(name, description);
        UsageKey storage k = _ownKey(accountHash, usageKeyHash);
        k.name = name;
        k.description = description;
        emit UsageApiKeyMetadataUpdated(accountHash, usageKeyHash, name, description);
    }

    function removeUsageApiKey(uint256 accountHash, uint256 usageKeyHash) external override {
        Account storage a = _writable(accountHash);
        _ownKey(accountHash, usageKeyHash);
        _removeAt(a.usageKeys, _indexOf(a.usageKeys, usageKeyHash));
        delete _keys[usageKeyHash];
        emit UsageApiKeyRemoved(accountHash, usageKeyHash);
    }

    function getUsageApiKey(uint256 usageKeyHash) external view override returns (UsageKeyView memory) {
        if (_keys[usageKeyHash].createdAt == 0) revert UnknownUsageKey(0, usageKeyHash);
        return _usageKeyView(usageKeyHash);
    }

    function listUsageApiKeys(uint256 accountHash, uint256 offset, uint256 limit)
        external
        view
        override
        returns (UsageKeyView[] memory items, uint256 total)
    {
        uint256[] storage list = _account(accountHash).usageKeys;
        total = list.length;
        (uint256 start, uint256 n) = _slice(total, offset, limit);
        items = new UsageKeyView[](n);
        for (uint256 i; i < n; ++i) items[i] = _usageKeyView(list[start + i]);
    }

    function _ownKey(uint256 h, uint256 kh) private view returns (UsageKey storage k) {
        k = _keys[kh];
        if (k.createdAt == 0 || k.accountHash != h) revert UnknownUsageKey(h, kh);
    }

    function _usageKeyView(uint256 kh) private view returns (UsageKeyView memory) {
        UsageKey storage k = _keys[kh];
        return UsageKeyView(k.accountHash, kh, k.wallet, k.expiration, k.balance, k.name, k.description, k.permissions, k.createdAt);
    }

    // --- groups ----------------------------------------------------------------------------------

    function addGroup(
        uint256 accountHash,
        string calldata name,
        string calldata description,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes
    ) external override returns (uint256 groupId) {
        Account storage a = _writable(accountHash);
        _checkMetadata(name, description);
        _checkMembers(accountHash, pkpIds, cidHashes);
        groupId = ++a.groupCount;
        ++a.liveGroups;
        Group storage g = _groups[accountHash][groupId];
        g.createdAt = uint64(block.timestamp);
        g.name = name;
        g.description = description;
        g.pkps = pkpIds;
        g.cids = cidHashes;
        emit GroupAdded(accountHash, groupId, name, description, pkpIds, cidHashes);
    }

    function updateGroup(
        uint256 accountHash,
        uint256 groupId,
        string calldata name,
        string calldata description,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes
    ) external override {
        _writable(accountHash);
        _checkMetadata(name, description);
        Group storage g = _group(accountHash, groupId);
        _checkMembers(accountHash, pkpIds, cidHashes);
        g.name = name;
        g.description = description;
        g.pkps = pkpIds;
        g.cids = cidHashes;
        emit GroupUpdated(accountHash, groupId, name, description, pkpIds, cidHashes);
    }

    function removeGroup(uint256 accountHash, uint256 groupId) external override {
        Account storage a = _writable(accountHash);
        _group(accountHash, groupId);
        delete _groups[accountHash][groupId];
        --a.liveGroups;
        emit GroupRemoved(accountHash, groupId);
    }

    function addPkpToGroup(uint256 accountHash, uint256 groupId, address pkpId) external override {
        _writable(accountHash);
        Group storage g = _group(accountHash, groupId);
        if (_wallets[accountHash][pkpId].createdAt == 0) revert UnknownWallet(accountHash, pkpId);
        if (_indexOf(g.pkps, pkpId) != type(uint256).max) revert Duplicate("pkpId");
        g.pkps.push(pkpId);
        emit PkpAddedToGroup(accountHash, groupId, pkpId);
    }

    function removePkpFromGroup(uint256 accountHash, uint256 groupId, address pkpId) external override {
        _writable(accountHash);
        Group storage g = _group(accountHash, groupId);
        uint256 i = _indexOf(g.pkps, pkpId);
        if (i == type(uint256).max) revert UnknownWallet(accountHash, pkpId);
        _removeAt(g.pkps, i);
        emit PkpRemovedFromGroup(accountHash, groupId, pkpId);
    }

    function addActionToGroup(uint256 accountHash, uint256 groupId, uint256 hashedCid) external override {
        _writable(accountHash);
        Group storage g = _group(accountHash, groupId);
        if (_indexOf(g.cids, hashedCid) != type(uint256).max) revert Duplicate("hashedCid");
        g.cids.push(hashedCid);
        emit ActionAddedToGroup(accountHash, groupId, hashedCid);
    }

    function removeActionFromGroup(uint256 accountHash, uint256 groupId, uint256 hashedCid) external override {
        _writable(accountHash);
        Group storage g = _group(accountHash, groupId);
        uint256 i = _indexOf(g.cids, hashedCid);
        if (i == type(uint256).max) revert UnknownAction(accountHash, hashedCid);
        _removeAt(g.cids, i);
        emit ActionRemovedFromGroup(accountHash, groupId, hashedCid);
    }

    function getGroup(uint256 accountHash, uint256 groupId) external view override returns (GroupView memory) {
        _account(accountHash);
        _group(accountHash, groupId);
        return _groupView(accountHash, groupId);
    }

    function listGroups(uint256 accountHash, uint256 offset, uint256 limit)
        external
        view
        override
        returns (GroupView[] memory items, uint256 total)
    {
        Account storage a = _account(accountHash);
        total = a.liveGroups;
        (, uint256 n) = _slice(total, offset, limit);
        items = new GroupView[](n);
        // Ids ascend in creation order; removed ids are gaps to step over.
        uint256 skip = offset;
        uint256 filled;
        for (uint256 id = 1; filled < n; ++id) {
            if (_groups[accountHash][id].createdAt == 0) continue;
            if (skip > 0) {
                --skip;
                continue;
            }
            items[filled++] = _groupView(accountHash, id);
        }
    }

    function _groupView(uint256 h, uint256 id) private view returns (GroupView memory) {
        Group storage g = _groups[h][id];
        return GroupView(id, g.name, g.description, g.pkps, g.cids);
    }

    /// add_group / update_group sets: nothing listed twice, every PKP registered in the account.
    function _checkMembers(uint256 h, address[] calldata pkps, uint256[] calldata cids) private view {
        for (uint256 i = 1; i < pkps.length; ++i) {
            for (uint256 j; j < i; ++j) {
                if (pkps[j] == pkps[i]) _invalid(string.concat("pkpIds[", _decimal(i), "]: listed twice"));
            }
        }
        for (uint256 i = 1; i < cids.length; ++i) {
            for (uint256 j; j < i; ++j) {
                if (cids[j] == cids[i]) _invalid(string.concat("cidHashes[", _decimal(i), "]: listed twice"));
            }
        }
        for (uint256 i; i < pkps.length; ++i) {
            if (_wallets[h][pkps[i]].createdAt == 0) revert UnknownWallet(h, pkps[i]);
        }
    }

    function _group(uint256 h, uint256 id) private view returns (Group storage g) {
        g = _groups[h][id];
        if (g.createdAt == 0) revert UnknownGroup(h, id);
    }

    // --- PKP registry ----------------------------------------------------------------------------

    function registerWalletDerivation(
        uint256 adminHash,
        address wallet,
        uint256 derivationPath,
        string calldata name,
        string calldata description
    ) external override {
        Account storage a = _writable(adminHash);
        if (wallet == address(0)) _invalid("wallet: zero address");
        _checkMetadata(name, description);
        Wallet storage w = _wallets[adminHash][wallet];
        if (w.createdAt != 0) revert Duplicate("wallet");
        w.derivationPath = derivationPath;
        w.createdAt = uint64(block.timestamp);
        w.name = name;
        w.description = description;
        a.wallets.push(wallet);
        emit WalletDerivationRegistered(adminHash, wallet, derivationPath, name, description);
    }

    function getWallet(uint256 accountHash, address wallet) external view override returns (WalletView memory) {
        _account(accountHash);
        if (_wallets[accountHash][wallet].createdAt == 0) revert UnknownWallet(accountHash, wallet);
        return _walletView(accountHash, wallet);
    }

    function listWallets(uint256 accountHash, uint256 offset, uint256 limit)
        external
        view
        override
        returns (WalletView[] memory items, uint256 total)
    {
        return _walletPage(accountHash, _account(accountHash).wallets, offset, limit);
    }

    function listWalletsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 limit)
        external
        view
        override
        returns (WalletView[] memory items, uint256 total)
    {
        _account(accountHash);
        return _walletPage(accountHash, _group(accountHash, groupId).pkps, offset, limit);
    }

    function _walletPage(uint256 h, address[] storage list, uint256 offset, uint256 limit)
        private
        view
        returns (WalletView[] memory items, uint256 total)
    {
        total = list.length;
        (uint256 start, uint256 n) = _slice(total, offset, limit);
        items = new WalletView[](n);
        for (uint256 i; i < n; ++i) items[i] = _walletView(h, list[start + i]);
    }

    function _walletView(uint256 h, address wallet) private view returns (WalletView memory) {
        Wallet storage w = _wallets[h][wallet];
        return WalletView(wallet, w.derivationPath, w.name, w.description, w.createdAt);
    }

    // --- actions ---------------------------------------------------------------------------------

    function addAction(
        uint256 accountHash,
        uint256 hashedCid,
        string calldata cid,
        string calldata name,
        string calldata description
    ) external override {
        Account storage a = _writable(accountHash);
        _checkText(cid, MAX_CID, true, "cid");
        if (uint256(keccak256(bytes(cid))) != hashedCid) _invalid("hashedCid: not keccak256 of cid");
        _checkMetadata(name, description);
        Action storage act = _actions[accountHash][hashedCid];
        if (act.createdAt != 0) revert Duplicate("hashedCid");
        act.createdAt = uint64(block.timestamp);
        act.cid = cid;
        act.name = name;
        act.description = description;
        a.actions.push(hashedCid);
        emit ActionAdded(accountHash, hashedCid, cid, name, description);
    }

    function updateActionMetadata(
        uint256 accountHash,
        uint256 hashedCid,
        string calldata name,
        string calldata description
    ) external override {
        _writable(accountHash);
        _checkMetadata(name, description);
        Action storage act = _action(accountHash, hashedCid);
        act.name = name;
        act.description = description;
        emit ActionMetadataUpdated(accountHash, hashedCid, name, description);
    }

    function deleteAction(uint256 accountHash, uint256 hashedCid) external override {
        Account storage a = _writable(accountHash);
        _action(accountHash, hashedCid);
        delete _actions[accountHash][hashedCid];
        _removeAt(a.actions, _indexOf(a.actions, hashedCid));
        uint256 last = a.groupCount;
        for (uint256 id = 1; id <= last; ++id) {
            uint256[] storage cids = _groups[accountHash][id].cids; // empty for removed ids
            uint256 i = _indexOf(cids, hashedCid);
            if (i != type(uint256).max) _removeAt(cids, i);
        }
        emit ActionDeleted(accountHash, hashedCid);
    }

    function getAction(uint256 accountHash, uint256 hashedCid) external view override returns (ActionView memory) {
        _account(accountHash);
        _action(accountHash, hashedCid);
        return _actionView(accountHash, hashedCid);
    }

    function listActions(uint256 accountHash, uint256 offset, uint256 limit)
        external
        view
        override
        returns (ActionView[] memory items, uint256 total)
    {
        return _actionPage(accountHash, _account(accountHash).actions, offset, limit);
    }

    /// The group's CID hashes in its order, each with its metadata when registered (empty when not).
    function listActionsInGroup(uint256 accountHash, uint256 groupId, uint256 offset, uint256 limit)
        external
        view
        override
        returns (ActionView[] memory items, uint256 total)
    {
        _account(accountHash);
        return _actionPage(accountHash, _group(accountHash, groupId).cids, offset, limit);
    }

    function _actionPage(uint256 h, uint256[] storage list, uint256 offset, uint256 limit)
        private
        view
        returns (ActionView[] memory items, uint256 total)
    {
        total = list.length;
        (uint256 start, uint256 n) = _slice(total, offset, limit);
        items = new ActionView[](n);
        for (uint256 i; i < n; ++i) items[i] = _actionView(h, list[start + i]);
    }

    function _action(uint256 h, uint256 hashedCid) private view returns (Action storage act) {
        act = _actions[h][hashedCid];
        if (act.createdAt == 0) revert UnknownAction(h, hashedCid);
    }

    function _actionView(uint256 h, uint256 hashedCid) private view returns (ActionView memory) {
        Action storage act = _actions[h][hashedCid];
        return ActionView(hashedCid, act.cid, act.name, act.description, act.createdAt);
    }

    // --- batching --------------------------------------------------------------------------------

    function multicall(bytes[] calldata calls) external override returns (bytes[] memory results) {
        results = new bytes[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            (bool ok, bytes memory ret) = address(this).delegatecall(calls[i]);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(ret, 32), mload(ret))
                }
            }
            results[i] = ret;
        }
    }

    // --- shared checks ---------------------------------------------------------------------------

    /// The account, for a write by msg.sender: UnknownAccount, then the sender rule.
    function _writable(uint256 h) private view returns (Account storage a) {
        a = _account(h);
        _checkSender(h, a.admin, a.managed);
    }

    function _account(uint256 h) private view returns (Account storage a) {
        a = _accounts[h];
        if (a.admin == address(0)) revert UnknownAccount(h);
    }

    /// docs/protocol.md §3: the admin, or an api payer relaying for a managed account.
    function _checkSender(uint256 h, address admin, bool managed) private view {
        if (msg.sender == admin) return;
        if (!isApiPayer[msg.sender]) revert NotAdmin(h, msg.sender);
        if (!managed) revert RelayNotAllowed(h, msg.sender);
    }

    /// Whether `who` (non-zero) administers an account.
    function _administers(address who) private view returns (bool) {
        return _accounts[_accountOf[who]].admin == who;
    }

    function _checkMetadata(string calldata name, string calldata description) private pure {
        _checkText(name, MAX_NAME, true, "name");
        _checkText(description, MAX_DESCRIPTION, false, "description");
    }

    function _checkText(string calldata value, uint256 max, bool required, string memory field) private pure {
        uint256 n = bytes(value).length;
        if (required && n == 0) _invalid(string.concat(field, ": must not be empty"));
        if (n > max) _invalid(string.concat(field, ": longer than ", _decimal(max), " bytes"));
    }

    function _invalid(string memory reason) private pure {
        revert InvalidArgument(reason);
    }

    function _decimal(uint256 v) private pure returns (string memory) {
        bytes memory digits = new bytes(78);
        uint256 i = digits.length;
        do {
            digits[--i] = bytes1(uint8(48 + (v % 10)));
            v /= 10;
        } while (v != 0);
        bytes memory out = new bytes(digits.length - i);
        for (uint256 j; j < out.length; ++j) out[j] = digits[i + j];
        return string(out);
    }

    // --- ordered lists ---------------------------------------------------------------------------

    /// Page bounds over `total` entries: the first index and the count.
    function _slice(uint256 total, uint256 offset, uint256 limit) private pure returns (uint256 start, uint256 n) {
        if (offset >= total) return (total, 0);
        n = total - offset;
        if (limit < n) n = limit;
        start = offset;
    }

    function _indexOf(uint256[] storage list, uint256 v) private view returns (uint256) {
        uint256 n = list.length;
        for (uint256 i; i < n; ++i) if (list[i] == v) return i;
        return type(uint256).max;
    }

    function _indexOf(address[] storage list, address v) private view returns (uint256) {
        uint256 n = list.length;
        for (uint256 i; i < n; ++i) if (list[i] == v) return i;
        return type(uint256).max;
    }

    /// Removes entry `i`, keeping the order of the rest.
    function _removeAt(uint256[] storage list, uint256 i) private {
        uint256 n = list.length;
        for (++i; i < n; ++i) list[i - 1] = list[i];
        list.pop();
    }

    function _removeAt(address[] storage list, uint256 i) private {
        uint256 n = list.length;
        for (++i; i < n; ++i) list[i - 1] = list[i];
        list.pop();
    }
}
