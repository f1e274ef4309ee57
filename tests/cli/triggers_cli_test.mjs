// SPDX-License-Identifier: Apache-2.0
// End-to-end checks of `enact triggers …` against a fresh enact-server --dev (core and trigger
// service on one listener): the walks of docs/triggers.md "With the CLI" — a webhook trigger
// (login with an issued token, create, fire, wait, runs, list, get, update, disable, enable,
// delete), a schedule trigger (created, listed, and its first firing followed), a chain-event
// trigger (created with topic filters) — the approval handshake (the CLI polls while this script
// plays the browser: EIP-4361 sign-in with an ethers wallet, then approve; and a denial), and the
// refusals: credentials on the command line (exit 2), no login, a loose token file, a schedule
// under 30 s, an unknown trigger (exit 1). No token or usage key ever appears in any output.
//
//   node tests/cli/triggers_cli_test.mjs path/to/enact path/to/enact-server
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  binaryArgs, check, cliRunner, devServerArgs, finish, loadEthers, startEnactServer,
} from '../support/node/harness.mjs';

const [enact, serverBinary] = binaryArgs('triggers_cli_test.mjs', 'ENACT', 'ENACT_SERVER');
const ethers = loadEthers();
const work = mkdtempSync(join(tmpdir(), 'enact-triggers-cli-'));
const path = (name) => join(work, name);

const secrets = [];  // values that must never be printed
const outputs = [];  // everything the CLI printed
const cli = cliRunner(enact, { cwd: work, outputs });
const { run, ok, json, fails } = cli;

// The browser side of the handshake (what the approval page does): open the page, sign in with
// an EIP-4361 message signed by `wallet`, then approve or deny the challenge.
async function browserDecides(authorizeUrl, wallet, approve) {
  const u = new URL(authorizeUrl);
  const page = await fetch(authorizeUrl);
  check(page.status === 200, `approval page: status ${page.status}`);
  const nonceRes = await fetch(`${u.origin}/auth/nonce`);
  const preCookie = nonceRes.headers.get('set-cookie').split(';')[0];
  const { nonce } = await nonceRes.json();
  const message =
    `${u.host} wants you to sign in with your Ethereum account:\n${wallet.address}\n\n` +
    'Sign in to the enact trigger service to approve or deny a client\'s access.\n\n' +
    `URI: ${u.origin}/auth/authorize\nVersion: 1\nChain ID: 1\nNonce: ${nonce}\n` +
    `Issued At: ${new Date().toISOString()}`;
  const signature = await wallet.signMessage(message);
  const signIn = await fetch(`${u.origin}/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: preCookie },
    body: JSON.stringify({ message, signature }),
  });
  check(signIn.status === 200, `sign-in: status ${signIn.status} ${await signIn.clone().text()}`);
  const session = signIn.headers.get('set-cookie').split(';')[0];
  const decide = await fetch(`${u.origin}/auth/${approve ? 'approve' : 'deny'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: session },
    body: JSON.stringify({ challenge: u.searchParams.get('challenge') }),
  });
  check(decide.status === 200, `${approve ? 'approve' : 'deny'}: status ${decide.status}`);
}

/// Runs `enact triggers login` in the background; once it printed the URL, plays the browser.
async function handshakeLogin(args, wallet, approve) {
  const child = spawn(enact, ['triggers', 'login', ...args], { env: cli.env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => { out += c; });
  const done = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`login printed no URL: ${err}`)), 20000);
    child.stderr.on('data', (c) => {
      err += c;
      const m = err.match(/(http:\/\/\S+\/auth\/authorize\?\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  await browserDecides(url, wallet, approve);
  const code = await done;
  outputs.push(out, err);
  return { code, out: out.trim(), err: err.trim(), url };
}

// --- setup: the token issued before the server starts, the core side through `enact core` -------
const issued = spawnSync(serverBinary, ['issue-token', '--data-dir', path('data'), '--user', 'alice'], { encoding: 'utf8' });
check(issued.status === 0, `issue-token: ${issued.stderr}`);
const token = issued.stdout.trim();
check(/^[A-Za-z0-9_-]{43}$/.test(token), 'issue-token printed a 43-character token');
secrets.push(token);
writeFileSync(path('alice.token'), token + '\n', { mode: 0o600 });

const server = await startEnactServer(serverBinary, devServerArgs(path('data'), '--sandbox-workers', '2', '--chain-rpc', 'svc=http://127.0.0.1:9'));
try {
  cli.env = { ...process.env, ENACT_URL: server.url, ENACT_CONFIG_DIR: path('config') };
  for (const v of ['ENACT_API_KEY', 'ENACT_TRIGGERS_URL', 'ENACT_TRIGGERS_TOKEN', 'ENACT_USAGE_KEY']) delete cli.env[v];

  json(['core', 'new-account', '--name', 'hooks', '--key-out', 'acme.key'], 'new account');
  cli.env.ENACT_API_KEY = readFileSync(path('acme.key'), 'utf8').trim();
  secrets.push(cli.env.ENACT_API_KEY);
  const intent = json(['core', 'billing', 'create-intent', '--amount-cents', '500'], 'intent');
  json(['core', 'billing', 'confirm', intent.payment_intent_id], 'confirm');
  writeFileSync(path('echo.js'), 'Enact.setResponse({ got: params.event, source: params.source || "webhook" });\n');
  const action = json(['core', 'actions', 'upload', 'echo.js'], 'upload');
  const group = json(['core', 'groups', 'add', '--name', 'hooks'], 'group');
  json(['core', 'groups', 'add-action', String(group.group_id), action.action_ipfs_cid], 'add action');
  json(['core', 'keys', 'add', '--name', 'trigger-runner', '--execute-in-groups', String(group.group_id),
        '--key-out', 'runner.key'], 'usage key');
  const usageKey = readFileSync(path('runner.key'), 'utf8').trim();
  secrets.push(usageKey);
  delete cli.env.ENACT_API_KEY;
  const cid = action.action_ipfs_cid;

  // --- not logged in yet; credentials on the command line are refused ---------------------------
  fails(['triggers', 'list'], 1, /not logged in: run `enact triggers login`/, 'no login');
  fails(['triggers', 'login', '--token', token], 2, /--token: give '-' \(read stdin\) or '@FILE'/, 'literal token refused');
  fails(['triggers', 'create', 'webhook', '--name', 'x', '--action', cid, '--usage-key', usageKey], 2,
        /--usage-key: keys are not accepted on the command line/, 'usage key on the command line refused');

  // --- the webhook walk (docs/triggers.md "With the CLI") -----------------------------------------
  // enact-server issue-token … | enact triggers login --token -
  const login = ok(['triggers', 'login', '--url', server.url, '--token', '-'], 'login with an issued token', token + '\n');
  // Text by default (docs/cli.md): aligned `key: value` lines, never a JSON document.
  check(/^user_id: +alice$/m.test(login.out) && /^url: +http:\/\/127\.0\.0\.1:\d+$/m.test(login.out) &&
        /^token_expires_at: \d{4}-/m.test(login.out) && !login.out.startsWith('{'), `login output: ${login.out}`);
  const tokenFile = path('config/triggers.json');
  check((statSync(tokenFile).mode & 0o777) === 0o600, 'token file is 0600');
  check((statSync(path('config')).mode & 0o777) === 0o700, 'config dir is 0700');
  const stored = JSON.parse(readFileSync(tokenFile, 'utf8'));
  check(stored.token === token && stored.url === server.url, 'token file holds the token and the URL');
  check(json(['triggers', 'whoami', '--json'], 'whoami').user_id === 'alice', 'whoami: alice');
  ok(['triggers', 'login', '--token', '@alice.token'], 'login with a token file');

  cli.env.ENACT_USAGE_KEY = usageKey;  // the docs' way: export ENACT_USAGE_KEY=$(cat runner.key)
  const hook = json(['triggers', 'create', 'webhook', '--name', 'deploys', '--action', cid, '--json'], 'create webhook');
  delete cli.env.ENACT_USAGE_KEY;
  check(/^trg_[0-9a-f]{32}$/.test(hook.id), `webhook id: ${hook.id}`);
  check(hook.type === 'webhook' && hook.enabled === true && hook.name === 'deploys', 'webhook fields');
  check(hook.webhook_url === `${server.url}/webhook/${hook.id}`, `webhook_url: ${hook.webhook_url}`);
  check(hook.usage_api_key_hash === ethers.keccak256(ethers.toUtf8Bytes(usageKey)), 'usage key hash');
  const human = ok(['triggers', 'get', hook.id], 'get (text)');
  check(new RegExp(`^id: +${hook.id}$`, 'm').test(human.out) && new RegExp(`^webhook_url: +${hook.webhook_url}$`, 'm').test(human.out) &&
        /^name: +deploys$/m.test(human.out) && !human.out.startsWith('{'), `get text: ${human.out}`);

  const fired = json(['triggers', 'fire-webhook', hook.id, '--data', '{"ref":"main"}', '--wait', '30', '--json'], 'fire --wait');
  check(fired.status === 'success', `run status: ${JSON.stringify(fired)}`);
  check(JSON.stringify(fired.response) === JSON.stringify({ got: { ref: 'main' }, source: 'webhook' }), `response: ${JSON.stringify(fired.response)}`);
  check(fired.params?.headers?.['content-type'] === 'application/json', 'the action saw the content type');

  writeFileSync(path('event.txt'), 'deployed v1.2');
  const runId = ok(['triggers', 'fire-webhook', hook.id, '--data', '@event.txt', '--content-type', 'text/plain',
                    '--header', 'X-Signature: abc'], 'fire from a file').out;
  check(/^run_/.test(runId), `fire prints the run id: ${runId}`);
  const second = json(['triggers', 'run', runId, '--wait', '30', '--json'], 'run --wait');
  check(second.status === 'success' && second.response?.got === 'deployed v1.2', `text event: ${JSON.stringify(second)}`);
  check(second.params?.headers?.['x-signature'] === 'abc', 'the header reached the action');

  const runs = json(['triggers', 'runs', hook.id, '--json'], 'runs');
  check(runs.total === 2 && runs.items[0].id === runId && runs.items[1].id === fired.id, 'runs newest first');
  const runsText = ok(['triggers', 'runs', hook.id], 'runs (text)');
  check(new RegExp(`^  - id: +${runId}$`, 'm').test(runsText.out) && /^    status: +success$/m.test(runsText.out) &&
        /^total: +2$/m.test(runsText.out) && !runsText.out.startsWith('{'), `runs text: ${runsText.out}`);

  const renamed = json(['triggers', 'update', hook.id, '--name', 'deploys-prod', '--json'], 'update');
  check(renamed.name === 'deploys-prod' && renamed.enabled, 'update renamed');
  check(json(['triggers', 'disable', hook.id, '--json'], 'disable').enabled === false, 'disabled');
  fails(['triggers', 'fire-webhook', hook.id], 1, /conflict/, 'a disabled webhook is refused');
  check(json(['triggers', 'enable', hook.id, '--json'], 'enable').enabled === true, 'enabled');

  // --- the schedule walk ----------------------------------------------------------------------------
  fails(['triggers', 'create', 'schedule', '--name', 'too-often', '--action', cid, '--cron', '*/10 * * * * *',
         '--usage-key-file', 'runner.key'], 1, /invalid_request: .*30/, 'a schedule under 30 s is refused');
  fails(['triggers', 'create', 'webhook', '--name', 'x', '--action', cid, '--cron', '* * * * *',
         '--usage-key-file', 'runner.key'], 2, /--cron does not apply to a webhook trigger/, 'option of another type');
  const tick = json(['triggers', 'create', 'schedule', '--name', 'tick', '--action', cid, '--cron', '*/30 * * * * *',
                     '--usage-key-file', 'runner.key', '--json'], 'create schedule');
  check(tick.type === 'schedule' && tick.config.cron === '*/30 * * * * *' && tick.config.timezone === 'UTC', `schedule: ${JSON.stringify(tick)}`);
  const listed = json(['triggers', 'list', '--json'], 'list');
  check(listed.total === 2 && listed.items.map((t) => t.id).join() === [hook.id, tick.id].join(), 'list oldest first');
  const listText = ok(['triggers', 'list'], 'list (text)');
  check(/^ +cron: +\*\/30 \* \* \* \* \*$/m.test(listText.out) && /^total: +2$/m.test(listText.out) &&
        !listText.out.startsWith('{'), `list text: ${listText.out}`);
  // The first firing comes within 30 s of its creation.
  const follow = ok(['triggers', 'runs', tick.id, '--follow', '--max', '1', '--timeout', '40', '--json'], 'runs --follow');
  let tickRun = {};
  try {
    tickRun = JSON.parse(follow.out);
  } catch {}
  check(tickRun.status === 'success' && tickRun.params?.source === 'schedule' && tickRun.response?.source === 'schedule',
        `scheduled run: ${follow.out}`);
  check(/^\d{4}-\d\d-\d\dT\d\d:\d\d:(00|30)(\.000)?Z$/.test(tickRun.params?.scheduled_at ?? ''), `scheduled_at: ${tickRun.params?.scheduled_at}`);
  json(['triggers', 'disable', tick.id, '--json'], 'disable the schedule');

  // --- the chain-event walk -----------------------------------------------------------------------
  const watcher = '0x00000000000000000000000000000000000000a1';
  const token20 = '0x1111111111111111111111111111111111111111';
  const ev = json(['triggers', 'create', 'chain-event', '--name', 'incoming', '--action', cid, '--chain', 'svc',
                   '--contract', token20, '--event', 'Transfer(address indexed from, address indexed to, uint256 value)',
                   '--topic2', watcher, '--start-block', '0', '--usage-key-file', 'runner.key', '--json'], 'create chain-event');
  check(ev.type === 'chain-event' && ev.config.chain === 'svc' && ev.config.contract === ethers.getAddress(token20), `chain-event: ${JSON.stringify(ev)}`);
  check(JSON.stringify(ev.config.topic_filters) === JSON.stringify([null, ethers.zeroPadValue(watcher, 32)]), `topic filters: ${JSON.stringify(ev.config.topic_filters)}`);
  check(ev.config.start_block === 0, 'start block');
  fails(['triggers', 'create', 'chain-event', '--name', 'x', '--action', cid, '--chain', 'ethereum', '--contract', token20,
         '--event', 'Transfer(address indexed from, address indexed to, uint256 value)', '--usage-key-file', 'runner.key'],
        1, /invalid_request/, 'a chain without an RPC URL is refused');
  fails(['triggers', 'create', 'chain-event', '--name', 'x', '--action', cid, '--chain', 'svc', '--contract', token20,
         '--event', 'Transfer(address indexed from, address indexed to, uint256 value)', '--topic1', '0x12',
         '--usage-key-file', 'runner.key'], 2, /--topic1: expected 0x \+ 64 hex digits/, 'a malformed topic');
  json(['triggers', 'delete', ev.id, '--json'], 'delete the chain-event trigger');

  // --- delete --------------------------------------------------------------------------------------
  const del = ok(['triggers', 'delete', hook.id], 'delete');
  check(del.out === `deleted: ${hook.id}`, `delete output: ${del.out}`);
  fails(['triggers', 'get', hook.id], 1, /not_found/, 'deleted trigger');
  fails(['triggers', 'run', runId], 1, /not_found/, 'its runs went with it');
  fails(['triggers', 'get', 'trg_' + '0'.repeat(32)], 1, /not_found/, 'unknown trigger');

  // --- the token file: loose permissions refused, a revoked/unknown token hints at login --------
  chmodSync(tokenFile, 0o644);
  fails(['triggers', 'list'], 1, /readable by others \(mode 644\)/, 'loose token file');
  chmodSync(tokenFile, 0o600);
  cli.env.ENACT_TRIGGERS_TOKEN = 'A'.repeat(43);
  fails(['triggers', 'list'], 1, /unauthenticated: .*\(run `enact triggers login`/, 'unknown token');
  delete cli.env.ENACT_TRIGGERS_TOKEN;

  // --- the approval handshake: approved, then denied -------------------------------------------------
  const wallet = ethers.Wallet.createRandom();
  cli.env.ENACT_CONFIG_DIR = path('config-handshake');
  const approved = await handshakeLogin(['--url', server.url, '--client', 'cli test'], wallet, true);
  check(approved.code === 0, `handshake login: exit ${approved.code}, ${approved.err}`);
  check(approved.url.includes('&client=cli%20test'), `authorize URL names the client: ${approved.url}`);
  check(new RegExp(`^user_id: +${wallet.address.toLowerCase()}$`, 'm').test(approved.out), `handshake login output: ${approved.out}`);
  check(json(['triggers', 'whoami', '--json'], 'whoami after handshake').user_id === wallet.address.toLowerCase(), 'the wallet user');
  const hs = JSON.parse(readFileSync(path('config-handshake/triggers.json'), 'utf8'));
  secrets.push(hs.token);
  check(!approved.url.includes(hs.token), 'the token is not in the URL');
  json(['triggers', 'list', '--json'], 'the approved token works');
  const denied = await handshakeLogin(['--timeout', '60'], wallet, false);
  check(denied.code === 1 && /access_denied/.test(denied.err), `denied login: exit ${denied.code}, ${denied.err}`);
  check(JSON.parse(readFileSync(path('config-handshake/triggers.json'), 'utf8')).token === hs.token, 'a denied login keeps the stored token');

  check(ok(['triggers', 'logout'], 'logout').out === 'removed: true', 'logout text');
  // A usage error with --json stays one line on stderr, exit 2.
  fails(['triggers', 'list', '--bogus', '--json'], 2, /unknown option --bogus/, 'usage error with --json');
  fails(['triggers', 'list'], 1, /not logged in/, 'after logout');

  // No credential was ever printed.
  const printed = outputs.join('\n');
  for (const s of secrets) check(!printed.includes(s), 'a credential appeared in the output');
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}

finish('triggers cli');
