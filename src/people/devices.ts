/**
 * Limits on guessing a person's password that a stranger cannot turn into a
 * lockout (OWASP Authentication Cheat Sheet, "device cookies"). Every
 * attempt counts against its source address. Beyond that, an attempt on an
 * email counts against the email, except from a browser that has signed in
 * with that email before: it carries a device cookie for it and counts
 * against its own cookie instead. So someone guessing from many addresses
 * can exhaust the email's allowance, and with it new browsers' attempts for
 * a minute at a time, but never the browsers the person already uses.
 *
 * The cookie, `<nonce>.<mac>`, is an HMAC of a random nonce and the email's
 * key under a key derived for it alone: nothing is stored, it names no one,
 * and it is good for one email (a browser keeps the last one signed in).
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { base64urlDecode, base64urlEncode, utf8 } from "../core/crypto";
import { derivedKeys } from "../core/derived-keys";
import type { AppEnv } from "../core/env";
import { hashSecret } from "../core/secrets";
import { cookieName, isHttps } from "./cookies";

const DEVICE_COOKIE = "poi_device";
/** How long a browser is remembered after its last sign-in. */
const DEVICE_SECONDS = 180 * 24 * 3600;
const NONCE = /^[A-Za-z0-9_-]{22}$/;

const USE = {
  info: "sign-in device cookies, HMAC-SHA-256, v1",
  algorithm: { name: "HMAC", hash: "SHA-256" },
  usages: ["sign", "verify"],
};

const signed = (nonce: string, emailKey: string) => utf8.encode(`${nonce} ${emailKey}`);

/** The nonce of the request's device cookie if it was issued for `emailKey`, else null. */
async function deviceNonce(c: Context<AppEnv>, emailKey: string): Promise<string | null> {
  const [nonce, macText, ...rest] = (getCookie(c, cookieName(c, DEVICE_COOKIE)) ?? "").split(".");
  const mac = macText === undefined ? null : base64urlDecode(macText);
  if (!nonce || !NONCE.test(nonce) || !mac || rest.length > 0) return null;
  const { current, previous } = await derivedKeys(c.env, USE);
  for (const key of previous ? [current, previous] : [current]) {
    if (await crypto.subtle.verify("HMAC", key, mac, signed(nonce, emailKey))) return nonce;
  }
  return null;
}

/** What a sign-in attempt on `emailKey` counts against beside its address: this browser's cookie, or the email. */
export async function signInSubject(c: Context<AppEnv>, emailKey: string): Promise<string> {
  const nonce = await deviceNonce(c, emailKey);
  return nonce === null ? `email:${await hashSecret(emailKey)}` : `device:${nonce}`;
}

/** After a sign-in is complete: this browser is one the person uses. */
export async function rememberDevice(c: Context<AppEnv>, emailKey: string): Promise<void> {
  const nonce = base64urlEncode(crypto.getRandomValues(new Uint8Array(16)));
  const { current } = await derivedKeys(c.env, USE);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", current, signed(nonce, emailKey)));
  setCookie(c, cookieName(c, DEVICE_COOKIE), `${nonce}.${base64urlEncode(mac)}`, {
    path: "/",
    httpOnly: true,
    secure: isHttps(c),
    sameSite: "Lax",
    maxAge: DEVICE_SECONDS,
  });
}
