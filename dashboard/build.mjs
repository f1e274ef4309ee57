// SPDX-License-Identifier: Apache-2.0
// Builds the dashboard that enact-server serves at /dashboard (docs/dashboard.md): src/main.js and
// what it imports bundled and minified into one ES module, src/style.css minified, and
// src/index.html copied, all into dist/ (or the directory given as the first argument). dist/ is
// committed and compiled into the server by server/dashboard/CMakeLists.txt; the test
// browser.dashboard_bundle rebuilds it into a temporary directory and fails when the committed
// files differ, so a source change without a rebuild cannot land.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "dist"));
mkdirSync(out, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  legalComments: "eof",
  logLevel: "warning",
  target: ["es2022", "chrome110", "firefox110", "safari16"],
  charset: "utf8",
};
// The bundled libraries' notice (their MIT licences ask for it; NOTICE at the top of the repository).
const banner = "// SPDX-License-Identifier: Apache-2.0\n/*! enact dashboard. Bundles @noble/curves and @noble/hashes: MIT License, Copyright (c) 2022 Paul Miller (https://paulmillr.com) */";
await build({ ...common, entryPoints: [join(here, "src/main.js")], format: "esm", outfile: join(out, "app.js"), banner: { js: banner } });
await build({ ...common, entryPoints: [join(here, "src/style.css")], outfile: join(out, "app.css") });
copyFileSync(join(here, "src/index.html"), join(out, "index.html"));
