/**
 * The architecture of src/, checked by `npm run check` (dependency-cruiser).
 *
 * Layers, bottom to top; a folder imports only from the layers below it and
 * from itself. Type-only imports count: a type is a dependency too.
 *
 *   core/       clock, config, env types, problem codes, scopes, crypto
 *   db/         drizzle client and schema, keyset queries, owned rows and ownership checks; in search/,
 *               the search engine over the indexes only migrations define (R*Tree, FTS5, tile cells)
 *   fields/     field and query-parameter rules the resources share (zod), HTML sanitizing
 *   http/       route metadata, body rules, validation, cursors and pages, errors; in middleware/, the
 *               middleware, one file each (app.ts lists them in the order a request meets them)
 *   auth/       tokens, the bearer middleware, the token endpoint, the resource sub-app
 *   media/      uploads to R2, media URLs, the /media route, the sweep
 *   geojson/    the GeoJSON representation of rows: Features, FeatureCollections, content negotiation
 *   changes/    the change log's reads and its feed (GET /v3.0/changes); below the resources, since
 *               webhooks/ delivers the same entries
 *   people/     people signing in (sessions and their cookies, passwords, TOTP, passkeys, /v3.0/auth and
 *               /v3.0/me) and the people of an account (its members, invitations, list collaborators and
 *               clients, managed from a person's session); beside the resources, never importing them
 *   resources   pinpoints/, lists/, categories/, events/, keys/, webhooks/: one folder each, never
 *               importing each other
 *   ogc/        OGC API – Features over the resources' searches and the GeoJSON representation
 *   tiles/      vector tiles (MVT, GeoJSON, TileJSON) over the pinpoints' filters and the tile cells
 *   maps/       the map page of a list (/maps/{list_id}): its HTML and policy; the data comes from the API
 *   openapi/    the document, read off the routes' metadata; the reference routes
 *   operator/   the operator routes and the Durable Object that moves an account to another shard
 *   app.ts      wires it all; index.ts, the Worker, runs it
 *   shims/      modules the bundler puts in place of an npm module's (wrangler.toml [alias]); no module
 *               of src/ imports them, and they import nothing of src/
 *
 * The Node scripts and benchmarks may use only the modules of src/ written to
 * run on Node 22 as well (PORTABLE); the rest runs only in workerd. client/,
 * the typed client, is a package of its own and imports nothing of the rest.
 */

/** Each layer: where it lives and which layers below it it may import. */
const RESOURCES = ["pinpoints", "lists", "categories", "events", "keys", "webhooks"];
/** Modules of src/ that import nothing Worker-only, so the Node scripts can use them. */
const PORTABLE = [
  "core/secrets.ts",
  "core/scopes.ts",
  "core/publishable-keys.ts",
  "core/search-form.ts",
  "people/email.ts",
  "people/password-policy.ts",
  "fields/plain-text.ts",
  "fields/search-columns.ts",
  "db/shard-plan.ts",
  "db/id-ranges.ts",
  "db/move.ts",
  "db/fills.ts",
  "db/client-registry.ts",
  "db/search/search-form-sql.ts",
];
const layers = {
  core: { path: "^src/core/", imports: [] },
  db: { path: "^src/db/", imports: ["core"] },
  fields: { path: "^src/fields/", imports: ["core", "db"] },
  http: { path: "^src/http/", imports: ["core", "db"] },
  auth: { path: "^src/auth/", imports: ["core", "db", "fields", "http"] },
  media: { path: "^src/media/", imports: ["core", "db", "fields", "http"] },
  geojson: { path: "^src/geojson/", imports: ["core", "db", "fields", "http"] },
  changes: { path: "^src/changes/", imports: ["core", "db", "fields", "http", "auth"] },
  people: { path: "^src/people/", imports: ["core", "db", "fields", "http", "auth"] },
  resources: {
    path: `^src/(${RESOURCES.join("|")})/`,
    imports: ["core", "db", "fields", "http", "auth", "media", "geojson", "changes"],
  },
  ogc: { path: "^src/ogc/", imports: ["core", "db", "fields", "http", "auth", "media", "geojson", "resources"] },
  tiles: { path: "^src/tiles/", imports: ["core", "db", "fields", "http", "auth", "media", "geojson", "resources"] },
  maps: { path: "^src/maps/", imports: ["core", "db", "fields", "http", "auth"] },
  openapi: { path: "^src/openapi/", imports: ["core", "http"] },
  operator: { path: "^src/operator/", imports: ["core", "db", "http"] },
  shims: { path: "^src/shims/", imports: [] },
};

const layerRules = Object.entries(layers).map(([name, { path, imports }]) => ({
  name: `${name}-imports-only-below`,
  comment: `${name} may import ${imports.length > 0 ? imports.join(", ") : "nothing else of src/"} (and itself)`,
  severity: "error",
  from: { path },
  to: { path: "^src/", pathNot: [path, ...imports.map((layer) => layers[layer].path)] },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "Runtime imports form no cycle; type-only ones may (a type cannot be undefined at load).",
      severity: "error",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    ...layerRules,
    {
      name: "resources-not-sideways",
      comment: "A resource never imports another: what two of them share moves down a layer.",
      severity: "error",
      from: { path: `^src/(${RESOURCES.join("|")})/` },
      to: { path: `^src/(${RESOURCES.join("|")})/`, pathNot: "^src/$1/" },
    },
    {
      name: "app-is-the-top",
      comment: "Only index.ts imports app.ts, and nothing in src/ imports index.ts.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/index\\.ts$" },
      to: { path: "^src/(app|index)\\.ts$" },
    },
    {
      name: "openapi-reads-only-route-metadata",
      comment:
        "The document is read off what the routes carry: of http/, openapi/ uses only the route metadata " +
        "and the bookmark header's name, never a middleware.",
      severity: "error",
      from: { path: "^src/openapi/" },
      to: { path: "^src/http/", pathNot: "^src/http/(route-metadata|bookmark-header)\\.ts$" },
    },
    {
      name: "scripts-use-only-portable",
      comment: "The Node scripts and benchmarks run on Node 22: of src/, they use only the PORTABLE modules.",
      severity: "error",
      from: { path: "^(scripts|bench)/" },
      to: { path: "^src/", pathNot: PORTABLE.map((module) => `^src/${module.replaceAll(".", "\\.")}$`) },
    },
    {
      name: "client-stands-alone",
      comment:
        "client/ is published as its own package: it imports only itself and its npm dependencies, " +
        "never the service's code, the scripts or the tests.",
      severity: "error",
      from: { path: "^client/" },
      to: { path: "^(src|scripts|bench|test)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".d.ts", ".js"] },
  },
};
