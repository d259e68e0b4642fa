import type { MiddlewareHandler } from "hono";
import { messagePage } from "./pages.ts";

/** What the sign-in pages' HTML forms send (none of them uploads a file). */
const FORM_TYPE = "application/x-www-form-urlencoded";

/**
 * The one reading of a sign-in page's POST body (SPEC §3a: bad input gets a clear page): a body
 * that is not the urlencoded form North's pages send — multipart, JSON, no type — or that does
 * not parse answers North's message page with 400, never a 500 with a JSON body. The form is
 * parsed here once; a handler's `c.req.parseBody()` then reads Hono's cached copy, so it cannot
 * throw.
 */
export const signInForms: MiddlewareHandler = async (c, next) => {
  if (c.req.method !== "POST") return next();
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  const parsed =
    type === FORM_TYPE &&
    (await c.req.parseBody().then(
      () => true,
      () => false,
    ));
  if (parsed) return next();
  return c.html(
    messagePage(
      "This form could not be read",
      "North's sign-in pages only accept what their own forms send.",
      "Start again from your Claude app.",
    ),
    400,
  );
};

/** The library's signed authorization query a form carries back, bounded. */
export const continueOf = (form: Record<string, unknown>) =>
  typeof form.continue === "string" && form.continue.length <= 8192 ? form.continue : "";
