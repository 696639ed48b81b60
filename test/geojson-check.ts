/**
 * A strict check of GeoJSON (RFC 7946) for the shapes the API serves: the
 * members each object must have, their types, positions of two or three
 * numbers with longitude in [-180, 180] and latitude in [-90, 90], no
 * members that RFC 7946 §7.1 forbids (`coordinates` on a Feature, etc.),
 * and our links (`href`, `rel`, `type` on each). Returns every problem found.
 */
type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

function checkLinks(links: Json, at: string, problems: string[]) {
  if (!Array.isArray(links)) return problems.push(`${at}: links must be an array`);
  links.forEach((link, i) => {
    if (!isObject(link)) return problems.push(`${at}/${i}: link must be an object`);
    for (const member of ["href", "rel", "type"]) {
      if (typeof link[member] !== "string" || link[member] === "")
        problems.push(`${at}/${i}/${member}: required string`);
    }
    if (typeof link.href === "string" && !URL.canParse(link.href)) problems.push(`${at}/${i}/href: not a URL`);
  });
}

function checkPoint(geometry: Json, at: string, problems: string[]) {
  if (geometry === null) return;
  if (!isObject(geometry)) return problems.push(`${at}: geometry must be an object or null`);
  if (geometry.type !== "Point") problems.push(`${at}/type: must be "Point"`);
  const c = geometry.coordinates;
  if (!Array.isArray(c) || c.length < 2 || c.length > 3 || !c.every((n) => typeof n === "number" && isFinite(n))) {
    return problems.push(`${at}/coordinates: must be 2 or 3 finite numbers`);
  }
  if (c[0] < -180 || c[0] > 180) problems.push(`${at}/coordinates/0: longitude out of range`);
  if (c[1] < -90 || c[1] > 90) problems.push(`${at}/coordinates/1: latitude out of range`);
  for (const forbidden of ["geometry", "properties", "features"]) {
    if (forbidden in geometry) problems.push(`${at}/${forbidden}: not allowed on a geometry`);
  }
}

function checkFeature(feature: Json, at: string, problems: string[]) {
  if (!isObject(feature)) return problems.push(`${at}: must be an object`);
  if (feature.type !== "Feature") problems.push(`${at}/type: must be "Feature"`);
  if (!("geometry" in feature)) problems.push(`${at}/geometry: required`);
  else checkPoint(feature.geometry, `${at}/geometry`, problems);
  if (!("properties" in feature) || (feature.properties !== null && !isObject(feature.properties))) {
    problems.push(`${at}/properties: required object or null`);
  }
  if ("id" in feature && typeof feature.id !== "number" && typeof feature.id !== "string") {
    problems.push(`${at}/id: must be a number or a string`);
  }
  for (const forbidden of ["coordinates", "features"]) {
    if (forbidden in feature) problems.push(`${at}/${forbidden}: not allowed on a Feature`);
  }
  if ("links" in feature) checkLinks(feature.links, `${at}/links`, problems);
}

export function geojsonProblems(document: Json): string[] {
  const problems: string[] = [];
  if (!isObject(document)) return ["document must be an object"];
  if (document.type === "Feature") checkFeature(document, "", problems);
  else if (document.type === "FeatureCollection") {
    if (!Array.isArray(document.features)) problems.push("/features: required array");
    else document.features.forEach((f, i) => checkFeature(f, `/features/${i}`, problems));
    for (const forbidden of ["coordinates", "geometry", "properties"]) {
      if (forbidden in document) problems.push(`/${forbidden}: not allowed on a FeatureCollection`);
    }
    if ("links" in document) checkLinks(document.links, "/links", problems);
  } else problems.push('/type: must be "Feature" or "FeatureCollection"');
  return problems;
}
