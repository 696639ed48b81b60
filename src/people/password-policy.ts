/**
 * What a new password must be (NIST SP 800-63B §5.1.1.2; OWASP Authentication
 * Cheat Sheet): at least 12 characters, at most 128, no composition rules
 * (no "one digit, one symbol": they make passwords harder to remember, not to
 * guess), and none that attackers try first: one of the most common
 * passwords of 12 characters or more in breach corpuses (the short list
 * below), one character repeated, or the person's own email address.
 * Characters are Unicode code points of the NFKC form, as stored (passwords.ts).
 */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 128;

/**
 * The passwords of 12 characters or more that lead the published breach-corpus lists (the RockYou and
 * Have I Been Pwned top lists, the yearly "most common passwords" reports), lower-cased: compared
 * case-insensitively, since "Password1234" is no better than "password1234".
 */
const COMMON = new Set([
  "123456789012",
  "1234567890123",
  "12345678901234",
  "123456789012345",
  "1234567890qwerty",
  "1234567890abcd",
  "0123456789012",
  "098765432112",
  "098765432109",
  "987654321098",
  "123123123123",
  "123456123456",
  "112233445566",
  "121212121212",
  "147258369147",
  "147852369123",
  "159753159753",
  "qwertyuiopas",
  "qwertyuiop123",
  "qwertyuiop1234",
  "qwertyuiopasdfghjkl",
  "qwertyuiopasdfghjklzxcvbnm",
  "qwerty123456",
  "qwerty1234567",
  "qwertyqwerty",
  "qwerty12345678",
  "asdfghjkl123",
  "asdfghjkl1234",
  "asdfasdfasdf",
  "zxcvbnm12345",
  "1q2w3e4r5t6y",
  "1q2w3e4r5t6y7u",
  "1qaz2wsx3edc",
  "1qaz2wsx3edc4rfv",
  "qazwsxedcrfv",
  "qazwsxedcrfvtgb",
  "zaq12wsxcde3",
  "zaq1zaq1zaq1",
  "1234qwerasdf",
  "1234qwerasdfzxcv",
  "abcdefghijkl",
  "abcdefghijklm",
  "abcdefghijklmnop",
  "abc123456789",
  "abcd12345678",
  "abc123abc123",
  "password1234",
  "password12345",
  "password123456",
  "password1234567",
  "password12345678",
  "password123!",
  "password@123",
  "passwordpassword",
  "p@ssw0rd1234",
  "passw0rd1234",
  "mypassword123",
  "iloveyou1234",
  "iloveyou123456",
  "iloveyouiloveyou",
  "letmein12345",
  "letmein123456",
  "welcome12345",
  "welcome123456",
  "welcome@1234",
  "changeme1234",
  "changeme123456",
  "administrator",
  "administrator1",
  "admin1234567",
  "admin123456789",
  "adminadmin123",
  "football1234",
  "baseball1234",
  "basketball12",
  "superman1234",
  "starwars1234",
  "trustno1trustno1",
  "monkey123456",
  "dragon123456",
  "princess1234",
  "sunshine1234",
  "computer1234",
  "whatever1234",
  "michael12345",
  "jessica12345",
  "charlie12345",
  "liverpool123",
  "chocolate123",
  "butterfly123",
  "q1w2e3r4t5y6",
  "1a2b3c4d5e6f",
  "a1b2c3d4e5f6",
  "correcthorsebatterystaple",
  "thequickbrownfox",
  "1234567890-=",
  "!@#$%^&*()_+",
]);

/** What is wrong with `password` as a new password of the person with `email`, or null when nothing is. */
export function passwordProblem(password: string, email: string | null): string | null {
  const normal = password.normalize("NFKC");
  const length = [...normal].length;
  if (length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  const folded = normal.toLowerCase();
  if (COMMON.has(folded)) return "is one of the most common passwords; choose another";
  if (new Set(folded).size === 1) return "is one character repeated; choose another";
  const address = email?.normalize("NFKC").trim().toLowerCase();
  if (address && (folded === address || folded === address.split("@")[0])) return "must not be your email address";
  return null;
}
