// SPDX-License-Identifier: Apache-2.0
// One action run in this Worker's isolate (host.ts makes a new one per request): the code as the
// body of an async function with `params` and `Enact.setResponse`, the response posted back.
self.onmessage = async (e: MessageEvent) => {
  const { code, params } = e.data;
  let response: unknown = null;
  const Enact = { setResponse: (v: unknown) => { response = v; } };
  try {
    const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
    await new AsyncFunction('params', 'Enact', code)(params, Enact);
    self.postMessage({ response });
  } catch (err) {
    self.postMessage({ error: String(err) });
  }
};
