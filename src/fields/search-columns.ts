/**
 * What a write stores for the full-text index beside the fields it sets
 * (migrations/0012_search_forms.sql): the search form of each text
 * (src/core/search-form.ts), null where it is the text itself, and the
 * description's text without markup, in search form. Every writer uses these:
 * single writes, bulk inserts and the seed. The imports name their files, so
 * the Node scripts can load this module too (.dependency-cruiser.cjs PORTABLE).
 */
import { searchForm, spaced } from "../core/search-form.ts";
import { plainText } from "./plain-text.ts";

/** The description's words without markup, as the index reads them; null for no description. */
export function descriptionText(html: string | null | undefined): string | null {
  const text = plainText(html);
  return text === null ? null : spaced(text);
}

/** The search form of a tag list as stored (its JSON text). */
export const tagsSearch = (tags: readonly string[]): string | null => searchForm(JSON.stringify(tags));

type Searchable = { name?: string; address?: string | null; tags?: string[]; description?: string | null };

/** `values` with the search columns of each searchable field it sets. */
export function withSearchColumns<T extends Searchable>(values: T) {
  return {
    ...values,
    ...(values.name !== undefined && { name_search: searchForm(values.name) }),
    ...(values.address !== undefined && { address_search: searchForm(values.address) }),
    ...(values.tags !== undefined && { tags_search: tagsSearch(values.tags) }),
    ...(values.description !== undefined && { description_text: descriptionText(values.description) }),
  };
}
