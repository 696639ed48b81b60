/**
 * Generates the sample city guide: categories with icons, about three
 * hundred pinpoints with addresses, descriptions and tags, themed lists and
 * events with several dates. Everything comes from a seeded generator, so the
 * same seed gives the same guide; only event dates move, so they are always
 * in the weeks after `now`. Names and streets sound like Lyon; venues,
 * addresses and coordinates are invented.
 */
import type { Glyph } from "./icons.ts";
import { Random } from "./random.ts";
import {
  DJS,
  EXHIBITION_TITLES,
  FIRST_NAMES,
  LANDMARKS,
  MARKETS,
  MUSEUMS,
  PARKS,
  PLACE_WORDS,
  QUARTERS,
  SURNAMES,
  VIEWPOINTS,
  WINE_REGIONS,
  type Named,
  type Quarter,
} from "./words.ts";

export const DEFAULT_SEED = 20261121;

export type SeedCategory = { name: string; glyph: Glyph; color: string };

export type SeedPinpoint = {
  name: string;
  category: string;
  address: string;
  latitude: number;
  longitude: number;
  altitude: number | null;
  description: string;
  tags: string[];
  quarter: string;
};

export type SeedList = { name: string; description: string | null; members: string[] };

export type SeedEvent = {
  name: string;
  pinpoint: string;
  description: string;
  /** Epoch milliseconds, as stored. */
  dates: { start: number; end: number }[];
  tags: string[];
};

export type Guide = {
  categories: SeedCategory[];
  pinpoints: SeedPinpoint[];
  lists: SeedList[];
  events: SeedEvent[];
};

type Kind =
  | "cafe"
  | "restaurant"
  | "bar"
  | "museum"
  | "park"
  | "market"
  | "bookshop"
  | "viewpoint"
  | "gallery"
  | "bakery"
  | "music"
  | "landmark";

/** Category per kind, how many venues of it, and the quarters where they cluster. */
const KINDS: Record<Kind, SeedCategory & { count: number; favourite: readonly string[] }> = {
  cafe: { name: "Cafés", glyph: "cup", color: "#8d5524", count: 40, favourite: ["the Pentes", "Presqu'île"] },
  restaurant: {
    name: "Restaurants",
    glyph: "cutlery",
    color: "#c0392b",
    count: 56,
    favourite: ["Vieux Lyon", "Presqu'île"],
  },
  bar: { name: "Bars", glyph: "cocktail", color: "#8e44ad", count: 34, favourite: ["Terreaux", "Guillotière"] },
  museum: { name: "Museums", glyph: "columns", color: "#2c3e50", count: 15, favourite: ["Vieux Lyon", "Fourvière"] },
  park: { name: "Parks & gardens", glyph: "tree", color: "#27ae60", count: 18, favourite: ["Brotteaux", "Fourvière"] },
  market: { name: "Markets", glyph: "basket", color: "#d35400", count: 15, favourite: ["Croix-Rousse", "Part-Dieu"] },
  bookshop: { name: "Bookshops", glyph: "book", color: "#16a085", count: 20, favourite: ["the Pentes", "Terreaux"] },
  viewpoint: { name: "Viewpoints", glyph: "mountains", color: "#2980b9", count: 12, favourite: ["Fourvière"] },
  gallery: { name: "Galleries", glyph: "frame", color: "#c2185b", count: 20, favourite: ["the Pentes", "Confluence"] },
  bakery: { name: "Bakeries", glyph: "baguette", color: "#b7950b", count: 30, favourite: ["Croix-Rousse"] },
  music: { name: "Live music", glyph: "note", color: "#6a1b9a", count: 14, favourite: ["Guillotière", "Vaise"] },
  landmark: { name: "Landmarks", glyph: "flag", color: "#5d6d7e", count: 20, favourite: ["Vieux Lyon", "Terreaux"] },
};

/** Fixed venues (museums, parks...) keyed by kind; the others get generated names. */
const NAMED: Partial<Record<Kind, readonly Named[]>> = {
  museum: MUSEUMS,
  park: PARKS,
  market: MARKETS,
  viewpoint: VIEWPOINTS,
  landmark: LANDMARKS,
};

const BASE_TAGS: Record<Kind, string[]> = {
  cafe: ["coffee"],
  restaurant: ["food"],
  bar: ["drinks"],
  museum: ["culture", "rainy-day"],
  park: ["outdoors", "free-entry"],
  market: ["food", "local-produce"],
  bookshop: ["books", "rainy-day"],
  viewpoint: ["view", "outdoors", "free-entry"],
  gallery: ["art", "rainy-day"],
  bakery: ["food", "bread"],
  music: ["live-music", "open-late"],
  landmark: ["heritage", "free-entry"],
};

const EXTRA_TAGS: Record<Kind, string[]> = {
  cafe: ["wifi", "terrace", "brunch", "specialty-coffee", "vegan-friendly", "dog-friendly", "quiet"],
  restaurant: ["terrace", "vegetarian", "lunch-menu", "natural-wine", "family", "book-ahead"],
  bar: ["wine", "cocktails", "craft-beer", "terrace", "open-late", "happy-hour"],
  museum: ["family", "accessible", "history", "free-first-sunday"],
  park: ["family", "picnic", "view", "running"],
  market: ["sunday-morning", "organic", "free-entry"],
  bookshop: ["comics", "second-hand", "kids-books", "café"],
  viewpoint: ["sunset", "photo-spot", "stairs"],
  gallery: ["free-entry", "contemporary", "photography", "prints"],
  bakery: ["pastry", "praline", "organic", "sunday-morning", "gluten-free"],
  music: ["jazz", "electro", "rock", "chanson", "concerts"],
  landmark: ["unesco", "photo-spot", "history"],
};

function generatedName(kind: Kind, rnd: Random): string {
  const place = () => rnd.pick(PLACE_WORDS);
  const surname = () => rnd.pick(SURNAMES);
  switch (kind) {
    case "cafe":
      return rnd.chance(0.6)
        ? `${rnd.pick(["Café", "Le Comptoir", "La Tasse", "Maison", "Brûlerie", "L'Atelier"])} ${place()}`
        : `${rnd.pick(["Slow", "Little", "Black", "Honest", "Plume", "Moka", "Kawa", "Bloom", "Origin", "Canopy"])} ${rnd.pick(["Coffee", "Roasters", "Coffee Bar", "Espresso"])}`;
    case "restaurant":
      return rnd.weighted(
        [
          () =>
            `Bouchon ${rnd.pick(["des Cordeliers", "du Vieux Lyon", "Saint-Jean", "des Marronniers", "Sainte-Catherine", "du Palais", "Mercière", "des Lumières", "des Canuts", "du Gone"])}`,
          () =>
            `Chez ${rnd.pick(["Marcel", "Germaine", "Paulette", "Léon", "Jeannot", "Mimi", "Odette", "Fernand", "Georgette", "Lulu", "Dédé", "Suzon"])}`,
          () =>
            `${rnd.pick(["Le Bistrot", "La Table", "Brasserie", "L'Auberge", "La Cantine", "Le Garde-Manger"])} ${place()}`,
          () =>
            rnd.pick([
              "Sakura",
              "Little Saigon",
              "Trattoria Sole",
              "Casa Lola",
              "Le Petit Liban",
              "Mezze",
              "Istanbul Grill",
              "Bao House",
              "Taqueria Luz",
              "Curry Leaf",
              "Pho 69",
              "Pizzeria Vesuvio",
            ]),
        ],
        [3, 2, 3, 2],
      )();
    case "bar":
      return rnd.chance(0.65)
        ? `${rnd.pick(["Le Bar", "La Cave", "Le Tonneau", "L'Apéro", "La Péniche", "Le Fût", "Le Zinc", "La Buvette"])} ${place()}`
        : `${rnd.pick(["Hop", "Copper", "Velvet", "Lantern", "Tiki", "Rooftop", "Corner", "Silk"])} ${rnd.pick(["Bar", "Pub", "Lounge", "Tap Room"])}`;
    case "bookshop":
      return rnd.chance(0.5)
        ? `Librairie ${rnd.chance(0.5) ? surname() : place()}`
        : `${rnd.pick(["Page", "Chapitre", "Le Bouquin", "Bulles", "L'Encre", "La Plume", "Le Marque-Page"])} ${rnd.pick(["& Café", place(), "des Enfants", "Rare"])}`;
    case "gallery":
      return rnd.chance(0.5)
        ? `Galerie ${surname()}`
        : `${rnd.pick(["Atelier", "Espace", "Galerie", "Studio"])} ${rnd.pick(["Soie", "Blanc", "Nord", "Sud", "Lumière", "Trame", "Ouvert", "Canut"])}`;
    case "bakery":
      return rnd.weighted(
        [
          () => `Boulangerie ${surname()}`,
          () => `Pâtisserie ${surname()}`,
          () => `Le Fournil ${place()}`,
          () => `Au Pain ${rnd.pick(["Doré", "de Campagne", "d'Antan", "Chaud", "Perdu", "Levé"])}`,
        ],
        [3, 2, 2, 1],
      )();
    case "music":
      return `${rnd.pick(["La Fabrique", "Le Hangar", "L'Entrepôt", "La Scène", "Le Club", "La Cale", "Le Kiosque"])} ${rnd.pick(["Sonore", "du Rhône", "Jazz", "Électrique", "Bleue", "Nord", "Rouge", "Saint-Georges"])}`;
    default:
      throw new Error(`${kind} venues have fixed names`);
  }
}

const NAMED_NOTES: Partial<Record<Kind, string[]>> = {
  museum: [
    "Closed on Mondays.",
    "Free on the first Sunday of the month.",
    "Audio guide in English.",
    "Allow two hours.",
  ],
  park: ["Open from dawn to dusk.", "Benches, shade and a drinking fountain.", "Busy on sunny Sundays."],
  market: ["Tuesday to Sunday mornings.", "Come early for the best stalls.", "Saturday is the big day."],
  viewpoint: ["Best at sunset.", "Reached by stairs or by the funicular.", "Bring a camera."],
  landmark: ["Free to visit.", "Lit up at night.", "Worth a detour.", "Best seen in the morning light."],
};

const ADJECTIVES = ["cosy", "bright", "tiny", "airy", "bustling", "quiet", "friendly", "much-loved"];

function where(rnd: Random, quarter: Quarter, street: string): string {
  return rnd.pick([
    `on ${street}`,
    `a few steps from ${quarter.landmark}`,
    `in the heart of ${quarter.name}`,
    `tucked away on ${street}`,
  ]);
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "An" : "A";
}

/** A short HTML description: plain paragraphs with a little emphasis, as an editor would write. */
function describe(kind: Kind, name: string, rnd: Random, quarter: Quarter, street: string, named?: Named): string {
  const adjective = rnd.pick(ADJECTIVES);
  const place = where(rnd, quarter, street);
  switch (kind) {
    case "cafe":
      return `<p>${article(adjective)} ${adjective} café ${place} serving ${rnd.pick(["single-origin pour-overs", "flat whites and cardamom buns", "house-roasted espresso", "oat lattes and homemade granola", "filter coffee and lemon cake", "cortados and canelés"])}.</p><p>${rnd.pick(["Good wifi and plenty of sockets.", "A handful of tables on the pavement in summer.", "Beans roasted on site every Tuesday.", "Board games on the shelf for slow afternoons.", "Dogs welcome.", "Brunch at weekends: <em>book ahead</em>."])}</p>`;
    case "restaurant":
      if (name.startsWith("Bouchon") || name.startsWith("Chez")) {
        const [first, second] = rnd.sample(
          [
            "quenelles in Nantua sauce",
            "salade lyonnaise",
            "andouillette",
            "saucisson brioché",
            "cervelle de canut",
            "tablier de sapeur",
            "gratin dauphinois",
            "praline tart",
          ],
          2,
        );
        return `<p>A traditional <strong>bouchon</strong> ${place}: ${first}, ${second} and a pot of Côtes-du-Rhône.</p><p>${rnd.pick(["Lunch menu on weekdays.", "Reservations recommended on Friday and Saturday nights.", "Checked tablecloths and a very loud dining room.", "Closed on Sundays."])}</p>`;
      }
      return `<p>${rnd.pick(["Seasonal bistro cooking", "Generous plates to share", "A weekly-changing menu", "Home-style cooking"])} ${place}.</p><p>${rnd.pick(["Vegetarian options every day.", "Natural wines by the glass.", "A quiet courtyard at the back.", "Open kitchen: sit at the counter."])}</p>`;
    case "bar":
      return `<p>${article(adjective)} ${adjective} ${name.includes("Péniche") ? "bar on a barge" : rnd.pick(["wine bar", "cocktail bar", "neighbourhood bar", "craft-beer bar"])} ${place}.</p><p>${rnd.pick(["Happy hour from 6 to 8 pm.", "Local Beaujolais on tap.", "Board games and a pinball machine.", "A terrace that catches the evening sun."])}</p>`;
    case "bookshop":
      return `<p>${article(adjective)} ${adjective} bookshop ${place} with ${rnd.pick(["a strong comics corner", "shelves of second-hand paperbacks", "a reading nook for children", "the best travel section in town"])}.</p><p>${rnd.pick(["Readings and signings most months.", "Staff picks on every table.", "English books on the back wall.", "Coffee while you browse."])}</p>`;
    case "gallery":
      return `<p>${rnd.pick(["Contemporary art", "Photography and prints", "Young local artists", "Textile and paper art"])} ${place}, in a former ${rnd.pick(["silk workshop", "garage", "printing house", "shop"])}.</p><p>${rnd.pick(["Free entry.", "New show every six weeks.", "Open Wednesday to Saturday afternoons."])}</p>`;
    case "bakery":
      return `<p>${article(adjective)} ${adjective} bakery ${place}, known for its ${rnd.pick(["sourdough loaves", "pink praline brioche", "croissants", "rye and seed bread", "fruit tarts"])}.</p><p>${rnd.pick(["Queue on Sunday mornings.", "Bread out of the oven at 7 and at 5.", "Organic flour from the Dombes.", "Closed on Mondays."])}</p>`;
    case "music":
      return `<p>A ${rnd.pick(["small club", "converted warehouse", "cellar venue", "upstairs stage"])} ${place} with ${rnd.pick(["jazz most nights", "local bands and DJs", "concerts from Thursday to Saturday", "an open mic every week"])}.</p><p>${rnd.pick(["Tickets at the door.", "Free entry before 10 pm.", "Standing room only."])}</p>`;
    default:
      // Fixed venues carry their own blurb; their address is generated, so the blurb names no place.
      return `<p>${named!.about[0]!.toUpperCase()}${named!.about.slice(1)}.</p><p>${rnd.pick(NAMED_NOTES[kind] ?? [])}</p>`;
  }
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function venue(kind: Kind, name: string, rnd: Random, named?: Named): SeedPinpoint {
  const spec = KINDS[kind];
  const quarter = rnd.weighted(
    QUARTERS,
    QUARTERS.map((q) => (spec.favourite.includes(q.name) ? 4 : 1)),
  );
  const street = rnd.pick(quarter.streets);
  const number = street.startsWith("Place") ? rnd.int(1, 30) : rnd.int(1, 120);
  // About 350 m either way: the quarter's streets, not the street itself.
  const latitude = round(quarter.latitude + rnd.normal() * 0.0032, 6);
  const longitude = round(quarter.longitude + rnd.normal() * 0.0045, 6);
  const tags = [
    ...BASE_TAGS[kind],
    ...(named?.tags ?? []),
    ...rnd.sample(EXTRA_TAGS[kind], rnd.int(0, 3)),
    ...(name.startsWith("Bouchon") || name.startsWith("Chez") ? ["bouchon", "lyonnaise"] : []),
  ];
  return {
    name,
    category: spec.name,
    address: `${number}${rnd.chance(0.08) ? " bis" : ""} ${street}, ${quarter.postcode} Lyon, France`,
    latitude,
    longitude,
    altitude: rnd.chance(0.75) ? round(quarter.altitude + rnd.normal() * 4, 1) : null,
    description: describe(kind, name, rnd, quarter, street, named),
    tags: [...new Set(tags)],
    quarter: quarter.name,
  };
}

function pinpoints(rnd: Random): { kind: Kind; pinpoint: SeedPinpoint }[] {
  const taken = new Set<string>();
  const out: { kind: Kind; pinpoint: SeedPinpoint }[] = [];
  for (const kind of Object.keys(KINDS) as Kind[]) {
    const named = NAMED[kind];
    for (let i = 0; i < KINDS[kind].count; i++) {
      if (named) {
        const entry = named[i % named.length]!;
        taken.add(entry.name);
        out.push({ kind, pinpoint: venue(kind, entry.name, rnd, entry) });
        continue;
      }
      let name = generatedName(kind, rnd);
      for (let attempt = 0; taken.has(name) && attempt < 20; attempt++) name = generatedName(kind, rnd);
      // Name collisions after many tries: number the branches, as chains do.
      for (let n = 2; taken.has(name); n++) name = `${name.replace(/ \d+$/, "")} ${n}`;
      taken.add(name);
      out.push({ kind, pinpoint: venue(kind, name, rnd) });
    }
  }
  // Interleave the kinds, so the first page of the collection already looks like a guide.
  return rnd.shuffle(out);
}

function lists(rnd: Random, all: { kind: Kind; pinpoint: SeedPinpoint }[]): SeedList[] {
  const names = (filter: (p: { kind: Kind; pinpoint: SeedPinpoint }) => boolean, count: number) =>
    rnd.sample(all.filter(filter), count).map((p) => p.pinpoint.name);
  const has = (tag: string) => (p: { pinpoint: SeedPinpoint }) => p.pinpoint.tags.includes(tag);
  return [
    {
      name: "Best coffee",
      description: "<p>Where to get a <strong>proper espresso</strong> or a slow pour-over.</p>",
      members: names((p) => p.kind === "cafe" && (has("specialty-coffee")(p) || rnd.chance(0.3)), 12),
    },
    {
      name: "Rainy day",
      description: "<p>Museums, galleries and bookshops for when the sky turns grey.</p>",
      members: names(has("rainy-day"), 15),
    },
    {
      name: "Traditional bouchons",
      description: "<p>Quenelles, checked tablecloths and a <em>pot</em> of wine.</p>",
      members: names(has("bouchon"), 12),
    },
    {
      name: "With kids",
      description: "<p>Playgrounds, puppets and places that do not mind a bit of noise.</p>",
      members: names((p) => has("family")(p) || has("playground")(p), 12),
    },
    {
      name: "Views over the city",
      description: "<p>Climb a little: the city, the two rivers and sometimes the Alps.</p>",
      members: names((p) => p.kind === "viewpoint" || has("view")(p), 14),
    },
    {
      name: "A night out",
      description: "<p>Wine bars, cocktails and live music until late.</p>",
      members: names((p) => p.kind === "bar" || p.kind === "music", 15),
    },
    {
      name: "Sunday morning",
      description: "<p>Markets and bakeries that are open when the rest of the city sleeps.</p>",
      members: names((p) => p.kind === "market" || (p.kind === "bakery" && rnd.chance(0.5)), 12),
    },
    {
      name: "Free things to do",
      description: "<p>No ticket needed.</p>",
      members: names(has("free-entry"), 15),
    },
    {
      name: "A weekend in Vieux Lyon",
      description: "<p>Traboules, bouchons and the cathedral, all within a few streets.</p>",
      members: names((p) => p.pinpoint.quarter === "Vieux Lyon", 12),
    },
    // An empty list too, as a person keeps one to fill later.
    { name: "To try next", description: null, members: [] },
  ];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Last Sunday of `month` (0-based) in `year`, as a UTC day number. */
function lastSunday(year: number, month: number): number {
  const last = Date.UTC(year, month + 1, 0);
  return last - new Date(last).getUTCDay() * DAY;
}

/** Epoch ms of a wall-clock time in Lyon (CET, or CEST between the last Sundays of March and October). */
function lyonTime(day: number, hour: number, minute: number): number {
  const year = new Date(day).getUTCFullYear();
  const summer = day >= lastSunday(year, 2) && day < lastSunday(year, 9);
  return day + (hour - (summer ? 2 : 1)) * HOUR + minute * 60_000;
}

type Schedule = { weekday: number; hour: number; minute: number; minutes: number };

/** `count` weekly occurrences on `weekday` (0 = Monday), starting some weeks after `monday`. */
function weekly(monday: number, s: Schedule, count: number, startWeek: number): { start: number; end: number }[] {
  return Array.from({ length: count }, (_, i) => {
    const start = lyonTime(monday + (startWeek + i) * 7 * DAY + s.weekday * DAY, s.hour, s.minute);
    return { start, end: start + s.minutes * 60_000 };
  });
}

type EventTemplate = {
  name: (rnd: Random) => string;
  description: string;
  schedule: Schedule;
  count: [number, number];
  tags: string[];
};

const EVENTS: Partial<Record<Kind, EventTemplate[]>> = {
  music: [
    {
      name: () => "Jazz jam session",
      description: "<p>Bring an instrument or just listen: the house trio opens, then the stage is yours.</p>",
      schedule: { weekday: 2, hour: 20, minute: 30, minutes: 180 },
      count: [4, 6],
      tags: ["jazz", "free"],
    },
    {
      name: (rnd) => `Electro night: ${rnd.pick(DJS)}`,
      description: "<p>Resident DJs until the small hours.</p>",
      schedule: { weekday: 5, hour: 23, minute: 0, minutes: 300 },
      count: [2, 3],
      tags: ["electro", "night"],
    },
    {
      name: () => "Chanson française evening",
      description: "<p>Brel, Barbara and new songwriters, unplugged.</p>",
      schedule: { weekday: 4, hour: 20, minute: 0, minutes: 150 },
      count: [2, 4],
      tags: ["chanson", "concert"],
    },
  ],
  museum: [
    {
      name: (rnd) => `Exhibition: ${rnd.pick(EXHIBITION_TITLES)}`,
      description: "<p>The temporary exhibition, open at weekends with the museum ticket.</p>",
      schedule: { weekday: 5, hour: 10, minute: 0, minutes: 480 },
      count: [3, 6],
      tags: ["exhibition", "rainy-day"],
    },
    {
      name: () => "Guided tour",
      description: "<p>An hour and a half with a curator. Meet at the reception desk.</p>",
      schedule: { weekday: 6, hour: 14, minute: 30, minutes: 90 },
      count: [3, 4],
      tags: ["guided-tour"],
    },
    {
      name: () => "Family workshop",
      description: "<p>For children from 6, with a grown-up. Materials provided.</p>",
      schedule: { weekday: 2, hour: 14, minute: 0, minutes: 120 },
      count: [2, 4],
      tags: ["family", "workshop"],
    },
  ],
  gallery: [
    {
      name: (rnd) => `${rnd.pick(FIRST_NAMES)} ${rnd.pick(SURNAMES)}: new work`,
      description: "<p>Opening night with the artist, then open on Saturday afternoons.</p>",
      schedule: { weekday: 5, hour: 14, minute: 0, minutes: 300 },
      count: [2, 5],
      tags: ["exhibition", "art", "free"],
    },
  ],
  park: [
    {
      name: () => "Open-air yoga",
      description: "<p>All levels. Bring a mat; cancelled if it rains.</p>",
      schedule: { weekday: 6, hour: 10, minute: 0, minutes: 60 },
      count: [4, 6],
      tags: ["outdoors", "sport", "free"],
    },
    {
      name: () => "Picnic concert",
      description: "<p>A brass band on the lawn; bring a blanket and something to share.</p>",
      schedule: { weekday: 5, hour: 17, minute: 0, minutes: 120 },
      count: [2, 3],
      tags: ["outdoors", "family", "concert", "free"],
    },
  ],
  market: [
    {
      name: () => "Farmers' market",
      description: "<p>Growers from the Monts du Lyonnais and the Dombes, every Saturday morning.</p>",
      schedule: { weekday: 5, hour: 7, minute: 0, minutes: 360 },
      count: [5, 6],
      tags: ["food", "local-produce"],
    },
    {
      name: () => "Night market",
      description: "<p>Street food, music and crafts after dark.</p>",
      schedule: { weekday: 4, hour: 18, minute: 0, minutes: 300 },
      count: [2, 3],
      tags: ["food", "night"],
    },
  ],
  bar: [
    {
      name: (rnd) => `Wine tasting: ${rnd.pick(WINE_REGIONS)}`,
      description: "<p>Six wines with a winemaker, cheese and charcuterie. Places are limited.</p>",
      schedule: { weekday: 3, hour: 19, minute: 0, minutes: 120 },
      count: [2, 3],
      tags: ["wine", "tasting"],
    },
    {
      name: () => "Quiz night",
      description: "<p>Teams of up to six; questions in French and English.</p>",
      schedule: { weekday: 1, hour: 20, minute: 0, minutes: 150 },
      count: [3, 5],
      tags: ["quiz", "night"],
    },
  ],
  bookshop: [
    {
      name: (rnd) => `Reading and signing: ${rnd.pick(FIRST_NAMES)} ${rnd.pick(SURNAMES)}`,
      description: "<p>The author reads from the new novel, then signs copies.</p>",
      schedule: { weekday: 3, hour: 18, minute: 30, minutes: 90 },
      count: [2, 2],
      tags: ["books", "free"],
    },
  ],
  landmark: [
    {
      name: () => "Traboules walking tour",
      description: "<p>Two hours through the hidden passages, with a guide who has the keys.</p>",
      schedule: { weekday: 5, hour: 10, minute: 0, minutes: 120 },
      count: [3, 5],
      tags: ["guided-tour", "heritage"],
    },
    {
      name: () => "Night tour of the old town",
      description: "<p>Lanterns, legends and the façades lit up.</p>",
      schedule: { weekday: 4, hour: 21, minute: 0, minutes: 90 },
      count: [2, 3],
      tags: ["guided-tour", "night"],
    },
  ],
};

/** Monday 00:00 UTC of the week containing `now` (day arithmetic only; times are placed by lyonTime). */
function mondayOf(now: number): number {
  const day = Math.floor(now / DAY) * DAY;
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY;
}

function events(rnd: Random, all: { kind: Kind; pinpoint: SeedPinpoint }[], now: number): SeedEvent[] {
  const monday = mondayOf(now);
  const out: SeedEvent[] = [];
  for (const { kind, pinpoint } of all) {
    const templates = EVENTS[kind];
    if (!templates || !rnd.chance(kind === "music" || kind === "museum" ? 0.9 : 0.4)) continue;
    for (const template of rnd.sample(templates, rnd.chance(0.25) ? 2 : 1)) {
      // Next week at the earliest, so every date is still ahead when the guide is seeded.
      const dates = weekly(monday, template.schedule, rnd.int(...template.count), rnd.int(1, 3));
      out.push({
        name: template.name(rnd),
        pinpoint: pinpoint.name,
        description: template.description,
        dates,
        tags: template.tags,
      });
    }
  }
  return out;
}

/** The whole guide for `seed`; event dates start in the week after `now` (epoch ms). */
export function generateGuide({ seed = DEFAULT_SEED, now }: { seed?: number; now: number }): Guide {
  const rnd = new Random(seed);
  const all = pinpoints(rnd);
  return {
    categories: Object.values(KINDS).map(({ name, glyph, color }) => ({ name, glyph, color })),
    pinpoints: all.map((p) => p.pinpoint),
    lists: lists(rnd, all),
    events: events(rnd, all, now),
  };
}
