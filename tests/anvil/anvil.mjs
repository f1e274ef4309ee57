// SPDX-License-Identifier: Apache-2.0
// Starts the pinned anvil binary (package.json: @foundry-rs/anvil-linux-amd64) for chain tests:
// a fresh in-memory chain on a free loopback port, ready when `startAnvil` resolves.
//
//   const node = await startAnvil({ chainId: 31337 });
//   ... node.url ...
//   await node.stop();
//
// The port is chosen by anvil itself (`--port 0`, read back from its "Listening on" line), so two
// tests starting nodes at once never race for a port. The accounts are anvil's well-known dev
// accounts (mnemonic "test test ... junk"), 10000 ETH each.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonRpc } from '../support/node/harness.mjs';

/** Absolute path of the anvil binary inside this directory's node_modules. */
export const anvilPath = fileURLToPath(
  new URL('./node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil', import.meta.url));

const kStartTimeoutMs = 30000;
const kStopTimeoutMs = 5000;

/**
 * Starts anvil. Options: chainId (default 31337), args (extra command-line arguments).
 * Resolves to {url, port, stop()} once the node answers eth_chainId with the chain id.
 */
export async function startAnvil({ chainId = 31337, args = [] } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'enact-anvil-home-'));
  const child = spawn(
    anvilPath,
    ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--color', 'never', ...args],
    // anvil keeps past blocks' states under $HOME/.foundry/anvil/tmp and removes them only on a
    // clean exit: its HOME is a directory of its own, removed when it exits however it exits.
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: home } });
  let output = '';
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => {
    exited = { code, signal };
    rmSync(home, { recursive: true, force: true });
    resolve(exited);
  }));
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`anvil did not start within ${kStartTimeoutMs} ms:\n${output}`)), kStartTimeoutMs);
    const onData = (chunk) => {
      output += chunk;
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (chunk) => { output += chunk; });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited (code ${code}, signal ${signal}) before listening:\n${output}`));
    });
  }).catch((e) => {
    child.kill('SIGKILL');
    throw e;
  });
  // Keep draining the pipes so a chatty node never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();

  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), kStopTimeoutMs);
    await exit;
    clearTimeout(timer);
  };
  try {
    const deadline = Date.now() + kStartTimeoutMs;
    for (;;) {
      try {
        const got = Number(BigInt(await jsonRpc(url, 'eth_chainId')));
        if (got !== chainId) throw new Error(`anvil answers chain id ${got}, expected ${chainId}`);
        break;
      } catch (e) {
        if (e.message.startsWith('anvil answers') || Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, port, stop };
}
