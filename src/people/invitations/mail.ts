/**
 * Mails an invitation's link where the operator set up Cloudflare Email
 * sending: a `[[send_email]]` binding named EMAIL and the sender EMAIL_FROM
 * (docs/operations.md, "Email"). Without them nothing is sent and the link is
 * only in the answer that made it, for the admin to pass on. A failure to send
 * is logged and reported as not mailed: the invitation stands, and its link is
 * in the answer all the same.
 */
import type { Bindings } from "../../core/env";

export type InvitationMail = { to: string; link: string; accountName: string; role: string; expiresAt: Date };

/** Sends the mail if the service can; whether it was sent. */
export async function mailInvitation(env: Bindings, from: string | null, mail: InvitationMail): Promise<boolean> {
  if (!env.EMAIL || from === null) return false;
  try {
    await env.EMAIL.send({
      from,
      to: mail.to,
      subject: `You are invited to ${mail.accountName}`,
      text:
        `You are invited to ${mail.accountName} as ${mail.role}.\n\n` +
        `Accept with this link, which works once, until ${mail.expiresAt.toUTCString()}:\n\n${mail.link}\n\n` +
        "If you did not expect this invitation, ignore this mail.\n",
    });
    return true;
  } catch (error) {
    console.error(JSON.stringify({ level: "error", message: "invitation mail not sent", error: String(error) }));
    return false;
  }
}
