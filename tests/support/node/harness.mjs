// SPDX-License-Identifier: Apache-2.0
// What the Node test scripts under tests/ share: the repository's root and its pinned npm
// packages, a check counter, a runner for a command-line binary (exit code, trimmed stdout and
// stderr), a fresh `enact-server` on a free loopback port, and a JSON-RPC call.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** `name` from the npm packages pinned in tests/<dir> (installed by scripts/install-deps). */
export function requirePinned(dir, name) {
  return createRequire(join(repo, 'tests', dir, 'package.json'))(name);
}

/** ethers 6, as pinned for the interop vectors (tests/vectors). */
export const loadEthers = () => requirePinned('vectors', 'ethers');

/**
 * The binaries named on the command line, resolved to absolute paths: `names` are their names in
 * the usage line. Exits 2 with the usage when one is missing.
 */
export function binaryArgs(script, ...names) {
  const paths = process.argv.slice(2, 2 + names.length).map((p) => p && resolve(p));
  if (paths.length < names.length || paths.some((p) => !p)) {
    console.error(`usage: node ${script} ${names.join(' ')}`);
    process.exit(2);
  }
  return paths;
}

/** Counts checks and failures of the whole script. */
export const tally = { checks: 0, failures: 0 };
export function check(cond, what) {
  tally.checks++;
  if (!cond) {
    tally.failures++;
    console.error(`FAIL: ${what}`);
  }
}
/** Counts an unexpected exception as a failure. */
export function fail(e, where = '') {
  tally.failures++;
  console.error(`FAIL: unexpected error${where ? ` (${where})` : ''}:`, e);
}
/** Prints the tally under `label` and exits 0 only without failures. */
export function finish(label) {
  if (tally.failures) {
    console.error(`${label}: ${tally.failures} of ${tally.checks} checks failed`);
    process.exit(1);
  }
  console.log(`${label}: ${tally.checks} checks passed`);
  process.exit(0);
}

/** Expects `promise` to reject; returns the error, or null (a failed check) when it resolves. */
export async function rejects(promise, what) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  check(false, `${what}: expected a rejection`);
  return null;
}

/**
 * Runs `binary` synchronously: `run(args, input)` gives { code, out, err } with stdout and stderr
 * trimmed; `ok` expects exit 0, `json` exit 0 and one JSON object on one line (returned, {} when
 * not), `fails` the exit `code`, no stdout and stderr matching `pattern`. `env` may be replaced
 * between calls; every output is appended to `outputs` when one is given.
 */
export function cliRunner(binary, { cwd, env, outputs, timeout } = {}) {
  const cli = { env: env ?? { ...process.env } };
  const describe = (args) => `enact ${args.join(' ')}`;
  cli.run = (args, input) => {
    const r = spawnSync(binary, args, { encoding: 'utf8', env: cli.env, cwd, input, timeout });
    if (r.error) throw r.error;
    outputs?.push(r.stdout, r.stderr);
    return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
  };
  cli.ok = (args, what, input) => {
    const r = cli.run(args, input);
    check(r.code === 0, `${what}: ${describe(args)}\n  exit ${r.code}, stdout '${r.out}', stderr '${r.err}'`);
    return r;
  };
  // The JSON form of a command (`--json`; its text form is for people).
  cli.json = (args, what, input) => {
    if (!args.includes('--json')) args = [...args, '--json'];
    const r = cli.run(args, input);
    let v = null;
    try {
      v = JSON.parse(r.out);
    } catch {}
    check(r.code === 0 && v !== null && typeof v === 'object' && !r.out.includes('\n'),
          `${what}: ${describe(args)}\n  exit ${r.code}, stdout '${r.out}', stderr '${r.err}'`);
    return v ?? {};
  };
  cli.fails = (args, code, pattern, what, input) => {
    const r = cli.run(args, input);
    check(r.code === code && r.out === '' && pattern.test(r.err),
          `${what}: ${describe(args)}\n  want exit ${code} and stderr ~ ${pattern}\n` +
          `  got exit ${r.code}, stdout '${r.out}', stderr '${r.err}'`);
    return r;
  };
  return cli;
}

/** The arguments of `enact-server --dev` on 127.0.0.1:0 with `dataDir`, then `flags`. */
export const devServerArgs = (dataDir, ...flags) => ['--dev', '--listen', '127.0.0.1:0', '--data-dir', dataDir, ...flags];

/**
 * Starts `enact-server` with `args` (which must listen on 127.0.0.1:0) and resolves to
 * { url, stop() } once it prints "listening on URL"; rejects, with its stderr, when it exits first
 * or does not listen within `timeoutMs`. stop() sends SIGTERM (SIGKILL after 10 s) and resolves when
 * it has exited.
 */
export async function startEnactServer(binary, args, { timeoutMs = 30000 } = {}) {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c) => { err = (err + c).slice(-65536); });
  const exited = new Promise((r) => child.on('exit', r));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`enact-server did not start:\n${err}`)), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (c) => {
      out += c;
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`enact-server exited (${code}):\n${err}`));
    });
  }).catch((e) => {
    child.kill('SIGKILL');
    throw e;
  });
  child.stdout.resume();
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    await exited;
    clearTimeout(timer);
  };
  return { url, stop };
}

/** One JSON-RPC 2.0 call to `url`; throws with the node's message when it answers an error. */
export async function jsonRpc(url, method, params = []) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}
