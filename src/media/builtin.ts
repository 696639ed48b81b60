/**
 * Media bundled with the Worker rather than stored in R2: the icon of the
 * built-in category 1 (migration 0001 stores its key). Served by the media
 * route like any object and never deleted by uploads or the sweep.
 */
import { decodeBase64 } from "./base64";

export type BuiltinMedia = { bytes: Uint8Array; contentType: string; etag: string };

/**
 * A 32×32 RGBA PNG (309 bytes) of a red map pin with a white dot, drawn once
 * with a small script (4×4 supersampled shapes, deflated with node:zlib) and
 * pasted here as base64. Bump the ETag if the bytes ever change.
 */
const DEFAULT_PIN_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAA/ElEQVR42tWX0QnDIBCGHSFL+O4kJW99dRQ3yQgOUOgePtkNpO1zsQgGgkRj7k40BwfBiPf9d4l6zAjOejq7IoA0gmsjuDWC++g2jsmWAHMSNOc2ziUFWCoCp75QAUCCV0PUpN0jfcYAWAIACwWQuUVf95v/Ph9+tfAcxgoQEgKgc8F/n7dPLYwVIDQEYDf9W+WphXdny1AC2F3syApluB5A9xJ0/wi7/4bdN6IhtuLuh9EQx/G2HK4isGtxIVldVQColnfC6SALLs5peilVVOqhALksnFaP6QsUhXoMQJoFkHpsZ6Sw6rEAaxbA6il6Q4VRTwEwYdQP0R3/AdavdCVFT+k5AAAAAElFTkSuQmCC";

const builtins: ReadonlyMap<string, BuiltinMedia> = new Map([
  [
    "builtin/default-pin.png",
    { bytes: decodeBase64(DEFAULT_PIN_PNG)!, contentType: "image/png", etag: '"builtin-default-pin-1"' },
  ],
]);

/** The bundled media stored under `key`, if any. */
export function builtinMedia(key: string): BuiltinMedia | undefined {
  return builtins.get(key);
}
