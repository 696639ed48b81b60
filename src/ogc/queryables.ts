/**
 * OGC API – Features Part 3, Queryables and Queryables as Query Parameters:
 * the feature properties an items request can filter on server-side, each
 * one a filter the map search already runs on an indexed or keyed column
 * (src/pinpoints/search.ts, src/events/search.ts). Nothing else is offered:
 * a client filtering on another property (GDAL's `-where`) filters the pages
 * it reads itself. docs/ogc.md "Queryables" says what each one matches.
 */
import * as z from "zod";
import { ID_SCHEMA, idParam } from "../fields/schemas";
import { tagsParam } from "../fields/search-params";

/** `?name=value` on the items of a collection that offers `name`; the same values as its schema below. */
export const queryableParams = {
  category: idParam.meta({
    description: "Pinpoints (and list members) in this category; a queryable of those collections",
    inputSchema: ID_SCHEMA,
  }),
  tags: tagsParam,
  pinpoint: idParam.meta({ description: "Events at this pinpoint; a queryable of `events`", inputSchema: ID_SCHEMA }),
};

export type QueryableName = keyof typeof queryableParams;

/** What the queryables of a request select. */
export type QueryableFilters = { [Name in QueryableName]?: z.output<(typeof queryableParams)[Name]> };

/** Each queryable's JSON Schema in `/queryables` (/rec/queryables/queryables-schema: title, description, type). */
export const QUERYABLE_SCHEMAS: Record<QueryableName, Record<string, unknown>> = {
  category: {
    title: "Category",
    description: "The id of the pinpoint's category: `category=3` selects the pinpoints in category 3.",
    ...ID_SCHEMA,
  },
  tags: {
    title: "Tags",
    description:
      "The feature's tags: `tags=museum` selects those carrying that tag, `tags=museum,free` those carrying both.",
    type: "array",
    items: { type: "string" },
  },
  pinpoint: {
    title: "Pinpoint",
    description: "The id of the event's pinpoint: `pinpoint=7` selects the events at pinpoint 7.",
    ...ID_SCHEMA,
  },
};
