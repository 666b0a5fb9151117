// After `vite build` (which empties the output folder): copy the API reference pages' assets — Swagger UI
// (npm swagger-ui-dist, Apache-2.0) and ReDoc (npm redoc, MIT), both pinned in package.json — into
// static/api-docs/, with their licence files and a NOTICE naming each package and version. Fathom serves
// /docs and /redoc from these files, so the reference works with no network (issue 31).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const modules = new URL("../node_modules/", import.meta.url).pathname;
const out = new URL("../../src/fathom/server/static/api-docs/", import.meta.url).pathname;
mkdirSync(out, { recursive: true });

// ReDoc's sidebar shows Redocly's logo from their CDN (an <img> no option turns off): it becomes an empty
// inline image. A ReDoc upgrade that moves the URL fails the build here rather than reaching out quietly.
const REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='0' height='0'/%3E";
const rewrites = {
  "redoc.standalone.js": (text) => {
    if (!text.includes(REDOC_LOGO)) throw new Error(`redoc.standalone.js no longer names ${REDOC_LOGO}: check it`);
    return text.split(REDOC_LOGO).join(EMPTY_IMAGE);
  },
};

const packages = [
  {
    name: "swagger-ui-dist",
    files: {
      "swagger-ui-bundle.js": "swagger-ui-bundle.js",
      "swagger-ui-bundle.js.LICENSE.txt": "swagger-ui-bundle.js.LICENSE.txt",
      "swagger-ui.css": "swagger-ui.css",
      "favicon-32x32.png": "favicon-32x32.png",
      LICENSE: "swagger-ui-dist.LICENSE",
      NOTICE: "swagger-ui-dist.NOTICE",
    },
  },
  {
    name: "redoc",
    files: {
      "bundles/redoc.standalone.js": "redoc.standalone.js",
      "bundles/redoc.standalone.js.LICENSE.txt": "redoc.standalone.js.LICENSE.txt",
      LICENSE: "redoc.LICENSE",
    },
  },
];

const lines = [
  "Third-party files in this folder, copied from npm packages by web/scripts/api-docs.mjs:",
  "",
];
for (const { name, files } of packages) {
  const meta = JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8"));
  for (const [from, to] of Object.entries(files)) {
    const source = join(modules, name, from);
    if (rewrites[to]) writeFileSync(join(out, to), rewrites[to](readFileSync(source, "utf8")));
    else copyFileSync(source, join(out, to));
  }
  lines.push(`${name} ${meta.version} (${meta.license}) ${meta.homepage ?? ""}`.trimEnd());
  lines.push(`  files: ${Object.values(files).join(", ")}`);
}
lines.push(
  "",
  "Each package's licence is the file named <package>.LICENSE beside this one.",
  `Changed: redoc.standalone.js shows an empty inline image instead of ${REDOC_LOGO}`,
  "(no request leaves the machine).",
  "",
);
writeFileSync(join(out, "NOTICE"), lines.join("\n"));
console.log(`api docs: ${packages.map((p) => p.name).join(", ")} copied to ${out}`);
