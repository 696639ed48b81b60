/** Which Feature each resource's JSON becomes (features.ts), for the GeoJSON variant of its routes. */
import { pinpointLocations } from "../db/locations";
import { eventFeature, pinpointFeature, type Location } from "./features";
import type { ToFeatures } from "./negotiate";

export const pinpointFeatures: ToFeatures = async (_c, items) =>
  items.map((item) => pinpointFeature(item as typeof item & Location));

/** Events are drawn at their pinpoints: one query for every location a page needs. */
export const eventFeatures: ToFeatures = async (c, items) => {
  const ids = [...new Set(items.map((item) => item.pinpoint as number))];
  const locations = await pinpointLocations(c.env.DB, c.var.principal.accountId, ids);
  return items.map((item) => eventFeature(item, locations.get(item.pinpoint as number)));
};
