/**
 * The console's stylesheet and its one script, served from /admin so the Content-Security-Policy
 * can stay `'self'` with no inline style or script allowed.
 */
export const STYLESHEET = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: .8rem 1.5rem; display: flex; gap: 1.5rem; align-items: center; }
header a { color: #cfd6e4; text-decoration: none; } header a[aria-current] { color: #fff; font-weight: 600; }
header form { margin-left: auto; } main { padding: 1.5rem; max-width: 72rem; }
table { border-collapse: collapse; width: 100%; background: #fff; margin-bottom: 1.5rem; }
th, td { text-align: left; vertical-align: top; padding: .45rem .6rem; border-bottom: 1px solid #e3e6eb; }
th { background: #eef0f4; font-weight: 600; } td.answer { white-space: pre-wrap; }
.notice { background: #fff7e0; border: 1px solid #f0d58c; padding: .6rem .8rem; margin-bottom: 1rem; }
.muted { color: #6b7385; } .tag { font-size: .8em; padding: .05rem .35rem; border-radius: .25rem; background: #e8ebf2; }
form.inline { display: inline; } input { padding: .3rem .4rem; } button { padding: .3rem .7rem; }
`;

/** Asks before any form marked `data-confirm` is sent, with that attribute's text. */
export const SCRIPT = `document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form && form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
`;
