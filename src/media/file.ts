/**
 * The original API's Media object as a request field (`media_file`,
 * `image_file`): only its shape. A leaf, so the resources' schemas can use it
 * without importing the upload path (upload.ts), which checks and stores it.
 */
import * as z from "zod";
import { defaults } from "../core/config";
import { verifiableTypes } from "./signatures";

/** Common misspellings of image/jpeg that browsers and clients still send, and the type each means. */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
};

/** What a field takes: any configured type, or only its image types (a category icon is never a video). */
export type Accept = "media" | "image";

/** The configured types a field accepts: those whose content can be checked, only images for `image`. */
export function acceptedTypes(configured: Iterable<string>, accept: Accept): string[] {
  return [...configured].filter((t) => verifiableTypes.has(t) && (accept === "media" || t.startsWith("image/")));
}

/** `{content, name, type}`; the document lists the types of the default `MEDIA_TYPES` (and their aliases). */
const file = (accept: Accept, id: string) => {
  const types = acceptedTypes(defaults.mediaTypes.split(","), accept);
  const aliases = Object.keys(TYPE_ALIASES).filter((alias) => types.includes(TYPE_ALIASES[alias]!));
  return z
    .object({
      // Base64, standard or URL-safe, padding optional; decoded and checked by storeUpload.
      content: z.string().min(1, "must not be empty"),
      // Kept as metadata and in Content-Disposition: no control characters, no lone surrogates (JSON allows both).
      name: z
        .string()
        .max(255, "must be at most 255 characters")
        .default("")
        .transform((name) =>
          name
            .replace(/[\u0000-\u001f\u007f]/g, "")
            .trim()
            .toWellFormed(),
        ),
      type: z
        .string()
        .trim()
        .toLowerCase()
        .max(255, "must be at most 255 characters")
        .meta({
          enum: [...types, ...aliases],
          description:
            `The media type (${aliases.join(", ")}: image/jpeg). A deployment accepts the types of its ` +
            "`MEDIA_TYPES` setting that the service can check by content; these are the default ones.",
        }),
    })
    .meta({ id });
};

/** `media_file` of pinpoints: an image or a video. */
export const mediaFile = file("media", "MediaFile");

/** `image_file` of categories: an image. */
export const imageFile = file("image", "ImageFile");

export type MediaFile = z.output<typeof mediaFile>;
