// SPDX-License-Identifier: Apache-2.0
// A Deno host that runs every action in a fresh isolate, as Lit's production service runs each
// action in a fresh Deno runtime: one new Worker per request, terminated after its answer. The
// action's code (the first argument's file) is the body of an async function that sees `params`
// and `Enact.setResponse`, as on enact's SpiderMonkey engine. Answers POST {"params": …} with
// {"response": …}. Loopback only. bench/engines drives it with wrk next to enact-server.
//
//   deno run --allow-read --allow-net=127.0.0.1 host.ts ACTION_FILE PORT
const [actionFile, port] = Deno.args;
const code = await Deno.readTextFile(actionFile);
const workerUrl = new URL('./isolate.ts', import.meta.url).href;

function runInFreshIsolate(params: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl, { type: 'module' });
    worker.onmessage = (e) => {
      worker.terminate();
      if (e.data.error !== undefined) reject(new Error(e.data.error));
      else resolve(e.data.response);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(new Error(e.message));
    };
    worker.postMessage({ code, params });
  });
}

Deno.serve({ hostname: '127.0.0.1', port: Number(port), onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`) },
  async (req) => {
    try {
      const { params } = await req.json();
      const response = await runInFreshIsolate(params ?? {});
      return Response.json({ response });
    } catch (e) {
      return Response.json({ error: String(e) }, { status: 422 });
    }
  });
