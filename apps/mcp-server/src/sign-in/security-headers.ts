/**
 * The headers every page of North's authorization server carries: no script, no framing, no
 * referrer, no caching. The sign-in routes set them on their pages, and the authorize answer on
 * the page it renders itself.
 */
export const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};
