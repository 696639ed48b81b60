/**
 * The Media object of SPEC.md as a request field (`media_file`,
 * `image_file`): only its shape. A leaf, so the resources' schemas can use it
 * without importing the upload path (upload.ts), which checks and stores it.
 */
import * as z from "zod";

/** `{content, name, type}`. */
export const mediaFile = z
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
    type: z.string().trim().toLowerCase().max(255, "must be at most 255 characters"),
  })
  .meta({ id: "MediaFile" });

export type MediaFile = z.output<typeof mediaFile>;
