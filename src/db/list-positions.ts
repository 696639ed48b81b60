/**
 * The owner's order of a list (docs/api.md, "The order of a list"): each membership row of
 * `list_pinpoints` has a `position`, an integer label, and a list's order is `(position, pinpoint_id)`
 * ascending, so equal positions are ordered by pinpoint id. Labels are sparse, so that moving one member
 * writes one row: the moved member takes a label between its new neighbours'. Only when two neighbours
 * have no free label between them is a bounded neighbourhood of labels spread out again, by the
 * order-maintenance algorithm of Bender, Cole, Demaine, Farach-Colton and Zito ("Two simplified
 * algorithms for maintaining order in a list", ESA 2002), which relabels O(log n) rows per move
 * amortized:
 *
 * - labels lie in [0, POSITION_SPACE), 2^53, so every label is a JavaScript safe integer;
 * - the smallest aligned range of labels around the spot, `[k·2^i, (k+1)·2^i)`, that holds at most
 *   (4/3)^i members once the moved one is counted (the density threshold T^-i with T = 1.5) has its
 *   members and the moved one relabelled evenly across it; the whole space is the last resort;
 * - members are POSITION_GAP apart when a list is filled by additions or reordered whole, which keeps
 *   every aligned range below its threshold, so a range to relabel is found near the spot.
 *
 * A membership written before positions existed has MIDDLE_POSITION, the column's default: such members
 * tie and so keep their order by pinpoint id, the order the API gave before, and the first move within
 * them spreads them as any crowded range is spread. New members go after the last one, POSITION_GAP
 * apart; a list whose additions reached the end of the space is spread out first (`compactSql`), once
 * in about two million additions.
 *
 * Every statement here reads the list as the D1 batch it runs in left it (one transaction), takes its
 * list and other values as numbered parameters (`?1`, …) whose meaning each builder states, and imports
 * nothing Worker-only.
 */

/** Labels are integers in [0, POSITION_SPACE). */
export const POSITION_SPACE = 2 ** 53;
/** The first member of an empty list, and every membership that predates positions. */
export const MIDDLE_POSITION = 2 ** 52;
/**
 * Between members added one after another, or placed by a whole new order: 2^31 is at least 1.5^i for
 * every level i below 53, so members this far apart never crowd a range, and 31 moves between the same
 * two members fit before any other row is written.
 */
export const POSITION_GAP = 2 ** 31;
/** The highest level, the whole space: 2^LEVELS = POSITION_SPACE. */
const LEVELS = 53;
/** How many members a range of 2^i labels may hold: (4/3)^i, the threshold of T = 1.5. */
const CAPACITY = JSON.stringify(Array.from({ length: LEVELS + 1 }, (_, i) => Math.floor((4 / 3) ** i)));

/**
 * SQL: the position of the `rank`-th (from 1) of `count` members added at the end of list `list` (SQL
 * expressions): POSITION_GAP after the last member (MIDDLE_POSITION for the first of an empty list), or
 * closer where the end of the space is near.
 */
export function appendedPositionSql(list: string, rank: string, count: string): string {
  const last = `coalesce((SELECT max(position) FROM list_pinpoints WHERE list_id = ${list}), ${MIDDLE_POSITION - POSITION_GAP})`;
  return `${last} + ${rank} * min(${POSITION_GAP}, (${POSITION_SPACE - 1} - ${last}) / (${count} + 1))`;
}

/**
 * SQL that spreads the members of list `list` evenly over the space, keeping their order, when fewer than
 * `count` + 1 labels are left after the last one (`appendedPositionSql` would find no room for `count`
 * members there) and `may` holds (the caller may write the list), else changes nothing. They are
 * POSITION_GAP apart, or closer in a list too long for that, around MIDDLE_POSITION, with room for `count`
 * more after them.
 */
export function compactSql(list: string, count: string, may: string): string {
  const members = `(SELECT count(*) FROM list_pinpoints WHERE list_id = ${list})`;
  const spacing = `min(${POSITION_GAP}, ${POSITION_SPACE - 1} / (${members} + ${count} + 1))`;
  const first = `(${POSITION_SPACE - 1} - (${members} + ${count}) * ${spacing}) / 2`;
  return `
    WITH plan(id, label) AS MATERIALIZED (
      SELECT pinpoint_id, ${first} + row_number() OVER (ORDER BY position, pinpoint_id) * ${spacing}
      FROM list_pinpoints
      WHERE list_id = ${list} AND ${may}
        AND ${POSITION_SPACE - 1} - (SELECT max(position) FROM list_pinpoints WHERE list_id = ${list}) < ${count} + 1
    )
    UPDATE list_pinpoints SET position = plan.label FROM plan
    WHERE list_pinpoints.list_id = ${list} AND list_pinpoints.pinpoint_id = plan.id AND list_pinpoints.position <> plan.label`;
}

/**
 * What a move reads, as common table expressions over ?1 (the list), ?2 (the member moved) and ?3 (the
 * member it goes before, NULL for the end), with `may` the SQL condition that the caller may write the
 * list at the version it expects:
 *   x      the moved member's label;  r  the label of the member it goes before;
 *   l      the member it goes after: the last before `r` (the last of all for the end), itself left out,
 *          found by a seek of the list's order index from `r` down (a bound of two values, without OR,
 *          which the index takes whole, so members that share a label are not walked);
 *   gap    the free labels between them, `lo` to `hi` exclusive (-1 and POSITION_SPACE where none);
 *   moving whether the move is allowed and changes the order: both are members, distinct, the list may be
 *          written, and the member now after the moved one is not already `r`.
 */
const moveReads = (may: string) => `
  x(p, id) AS (SELECT position, pinpoint_id FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id = ?2),
  r(p, id) AS (SELECT position, pinpoint_id FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id = ?3),
  l(p, id) AS (
    SELECT position, pinpoint_id FROM list_pinpoints
    WHERE list_id = ?1 AND pinpoint_id <> ?2
      AND (position, pinpoint_id) < (coalesce((SELECT p FROM r), ${POSITION_SPACE}), coalesce((SELECT id FROM r), 0))
    ORDER BY position DESC, pinpoint_id DESC LIMIT 1
  ),
  after_x(id) AS (
    SELECT pinpoint_id FROM list_pinpoints
    WHERE list_id = ?1 AND (position, pinpoint_id) > ((SELECT p FROM x), (SELECT id FROM x))
    ORDER BY position, pinpoint_id LIMIT 1
  ),
  gap(lo, hi) AS (SELECT coalesce((SELECT p FROM l), -1), coalesce((SELECT p FROM r), ${POSITION_SPACE})),
  moving(yes) AS (
    SELECT ${may} AND EXISTS (SELECT 1 FROM x) AND (?3 IS NULL OR (?3 <> ?2 AND EXISTS (SELECT 1 FROM r)))
      AND (SELECT id FROM after_x) IS NOT ?3
  )`;

/**
 * The statements that move member ?2 of list ?1 before member ?3 (or to the end when ?3 is NULL), in
 * this order in one batch, when `may` holds (see `moveReads`); neither writes anything when the member is
 * already there.
 *
 * `spread`: when the moved member's new neighbours have no free label between them, relabels the
 * smallest aligned range around the spot that is sparse enough (see above), the moved member placed in
 * it after its new predecessor, or first when it has none. `place`: otherwise, gives the moved member a
 * label between its neighbours', POSITION_GAP from the one it has at the ends of the list.
 */
export function moveSql(may: string): { spread: string; place: string } {
  const count = (base: string, size: string) =>
    `(SELECT count(*) FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id <> ?2 AND position >= ${base} AND position < ${base} + ${size})`;
  const baseAt = (level: string) => `((a >> ${level}) << ${level})`;
  const spread = `
    WITH RECURSIVE ${moveReads(may)},
    anchor(a) AS (
      SELECT coalesce((SELECT p FROM l), (SELECT p FROM r))
      WHERE (SELECT yes FROM moving) AND (SELECT hi - lo FROM gap) < 2
    ),
    levels(i, base, n) AS (
      SELECT 1, ${baseAt("1")}, ${count(baseAt("1"), "2")} FROM anchor
      UNION ALL
      SELECT i + 1, ${baseAt("(i + 1)")}, ${count(baseAt("(i + 1)"), "(1 << (i + 1))")}
      FROM levels, anchor WHERE i < ${LEVELS} AND n + 1 > ('${CAPACITY}' ->> i)
    ),
    chosen(base, size, n) AS (SELECT base, 1 << i, n FROM levels ORDER BY i DESC LIMIT 1),
    plan(id, label) AS MATERIALIZED (
      SELECT id, (SELECT base FROM chosen) + row_number() OVER (ORDER BY k1, k2, k3) * (SELECT size / (n + 2) FROM chosen)
      FROM (
        SELECT pinpoint_id AS id, position AS k1, pinpoint_id AS k2, 0 AS k3 FROM list_pinpoints, chosen
        WHERE list_id = ?1 AND pinpoint_id <> ?2 AND position >= base AND position < base + size
        UNION ALL
        SELECT ?2, coalesce((SELECT p FROM l), -1), coalesce((SELECT id FROM l), 0), 1 FROM chosen
      )
    )
    UPDATE list_pinpoints SET position = plan.label FROM plan
    WHERE list_pinpoints.list_id = ?1 AND list_pinpoints.pinpoint_id = plan.id AND list_pinpoints.position <> plan.label`;
  const place = `
    WITH ${moveReads(may)}
    UPDATE list_pinpoints SET position = (
      SELECT CASE
        WHEN ?3 IS NULL THEN lo + min(${POSITION_GAP}, (hi - lo) / 2)
        WHEN (SELECT id FROM l) IS NULL THEN hi - min(${POSITION_GAP}, (hi - lo) / 2)
        ELSE lo + (hi - lo) / 2
      END FROM gap
    )
    WHERE list_id = ?1 AND pinpoint_id = ?2 AND (SELECT yes FROM moving) AND (SELECT hi - lo FROM gap) >= 2`;
  return { spread, place };
}

/**
 * The statement that puts the members of list ?1 in the order of ?2, a JSON array of pinpoint ids,
 * POSITION_GAP apart around MIDDLE_POSITION, when `may` holds, the array holds exactly the list's
 * members, each once, and their order differs from the list's; otherwise it writes nothing. Only the
 * rows whose label changes are written.
 */
export function reorderSql(may: string): string {
  return `
    WITH given(id, k) AS MATERIALIZED (SELECT value, key FROM json_each(?2)),
    sent(n) AS (SELECT count(*) FROM given),
    current_order(id, k) AS (
      SELECT pinpoint_id, row_number() OVER (ORDER BY position, pinpoint_id) - 1 FROM list_pinpoints WHERE list_id = ?1
    ),
    plan(id, label) AS MATERIALIZED (
      SELECT id, ${MIDDLE_POSITION} + (k - (SELECT n FROM sent) / 2) * ${POSITION_GAP} FROM given
      WHERE ${may}
        AND (SELECT count(DISTINCT id) FROM given) = (SELECT n FROM sent)
        AND (SELECT count(*) FROM list_pinpoints WHERE list_id = ?1) = (SELECT n FROM sent)
        AND NOT EXISTS (
          SELECT 1 FROM given AS g
          WHERE NOT EXISTS (SELECT 1 FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id = g.id)
        )
        AND EXISTS (SELECT 1 FROM current_order AS c JOIN given AS g ON g.id = c.id WHERE g.k <> c.k)
    )
    UPDATE list_pinpoints SET position = plan.label FROM plan
    WHERE list_pinpoints.list_id = ?1 AND list_pinpoints.pinpoint_id = plan.id AND list_pinpoints.position <> plan.label`;
}
