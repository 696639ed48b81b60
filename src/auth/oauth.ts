/**
 * The OAuth 2.0 shapes of the token endpoint (RFC 6749): its request and
 * response bodies as schemas, and its error responses, which are RFC 6749
 * §5.2 bodies rather than problem details.
 */
import * as z from "zod";
import { SCOPES } from "../core/scopes";

/** The RFC 6749 §5.2 error codes this endpoint answers with. */
export const OAUTH_ERRORS = ["invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"] as const;
type OAuthErrorCode = (typeof OAUTH_ERRORS)[number];

/** The token request (RFC 6749 §4.4.2); the client authenticates with Basic or the two client fields (§2.3.1). */
export const tokenRequest = z
  .object({
    grant_type: z.literal("client_credentials"),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z
      .string()
      .optional()
      .meta({
        description: `Space-separated subset of the client's scopes (${SCOPES.join(", ")}); all of them when absent`,
      }),
  })
  .meta({ id: "TokenRequest" });

/** A successful token response (RFC 6749 §5.1). */
export const tokenJson = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int().meta({ description: "Seconds until the token expires" }),
    scope: z.string(),
  })
  .meta({ id: "Token" });

/** An OAuth error response (RFC 6749 §5.2). */
export const oauthErrorJson = z
  .object({
    error: z.enum(OAUTH_ERRORS),
    error_description: z.string(),
  })
  .meta({ id: "OAuthError" });

/** RFC 6749 §5.2 error response; never cached (§5.1). */
export function oauthError(code: OAuthErrorCode, description: string): Response {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "Cache-Control": "no-store",
    Pragma: "no-cache",
  };
  // §5.2: invalid_client answers 401 with a challenge for the scheme the client can use.
  if (code === "invalid_client") headers["WWW-Authenticate"] = 'Basic realm="api", charset="UTF-8"';
  const body: z.output<typeof oauthErrorJson> = { error: code, error_description: description };
  return new Response(JSON.stringify(body), {
    status: code === "invalid_client" ? 401 : 400,
    headers,
  });
}
