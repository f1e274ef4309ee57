// SPDX-License-Identifier: Apache-2.0
// The permission registry contract (contracts/PermissionRegistry.sol) on anvil:
// deploys the committed build artifact and checks every function, custom error and event of
// IPermissionRegistry against the rules the embedded ledger enforces (docs/protocol.md §3,
// server/ledger/embedded_ledger.hpp). Run: node --test registry.test.mjs
//
// The cases are in registry_*.mjs, imported here in the order they run; the last case checks that
// together they called every function and observed every error and event.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { called, emitted, iface, kEventParams, reverted } from './registry_support.mjs';
import './registry_accounts.mjs';
import './registry_records.mjs';
import './registry_rules.mjs';

describe('coverage of the interface', () => {
  test('every function called, every error and event observed', () => {
    const fns = iface.fragments.filter((f) => f.type === 'function').map((f) => f.format('sighash'));
    assert.deepEqual(fns.filter((f) => !called.has(f)), []);
    const errors = iface.fragments.filter((f) => f.type === 'error').map((f) => f.name);
    assert.deepEqual(errors.filter((e) => !reverted.has(e)), []);
    assert.deepEqual(Object.keys(kEventParams).filter((e) => !emitted.has(e)), []);
  });
});
