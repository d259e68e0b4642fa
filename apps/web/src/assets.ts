/**
 * The console's stylesheet and its one script, served from /admin so the Content-Security-Policy
 * can stay `'self'` with no inline style or script allowed.
 */
export const STYLESHEET = `
:root { --ink: #1d2330; --muted: #5b6374; --line: #d9dde5; --bg: #f6f7f9; --card: #fff;
  --accent: #1d4ed8; --ok-bg: #ecfdf3; --ok-line: #12805c; --err-bg: #fef2f2; --err-line: #b42318;
  --info-bg: #fff7e0; --info-line: #b7791f; color-scheme: light; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: .5rem; top: .5rem; background: #fff; padding: .4rem .6rem; z-index: 2; }

header { background: var(--ink); color: #fff; padding: .6rem 1.5rem; display: flex; flex-wrap: wrap; gap: .4rem 1.25rem; align-items: center; }
header .brand { font-weight: 700; margin-right: .5rem; }
header nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
header nav a { color: #d5dbe7; text-decoration: none; padding: .2rem 0; display: inline-block; }
header nav a[aria-current] { color: #fff; font-weight: 600; border-bottom: 2px solid #fff; }
header form { margin-left: auto; }
header button { background: transparent; color: #fff; border: 1px solid #8c95a8; }

main { padding: 1.25rem 1.5rem 3rem; max-width: 72rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; } h2 { font-size: 1.15rem; margin: 1.75rem 0 .6rem; }
p, li { overflow-wrap: anywhere; }

.table-wrap { width: 100%; overflow-x: auto; margin-bottom: 1.5rem; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; vertical-align: top; padding: .5rem .65rem; border-bottom: 1px solid var(--line); overflow-wrap: break-word; }
th { background: #eef0f4; font-weight: 600; white-space: nowrap; }
td.answer, td.body { white-space: pre-wrap; }
code { font-size: .9em; overflow-wrap: anywhere; }

.notice { border-left: 4px solid var(--info-line); background: var(--info-bg); padding: .6rem .85rem; margin: 0 0 1rem; }
.notice.success { border-left-color: var(--ok-line); background: var(--ok-bg); }
.notice.error { border-left-color: var(--err-line); background: var(--err-bg); }
.muted { color: var(--muted); }
.tag { font-size: .8em; padding: .1rem .4rem; border-radius: .25rem; background: #e4e8f0; white-space: nowrap; }
.tag.erased { background: #fde8e7; color: #8a1c12; } .tag.live { background: #dff5ea; color: #0d5f43; }

form { margin: 0; } form.inline { display: inline; }
form.stack { display: grid; gap: .6rem; max-width: 32rem; margin-bottom: 1.25rem; }
form.stack input { width: 100%; } form.stack button { justify-self: start; }
form.filters { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: end; margin-bottom: 1rem; }
label { display: block; font-weight: 600; font-size: .92rem; }
label > input, label > select { display: block; margin-top: .2rem; font-weight: 400; }
input, select { font: inherit; padding: .4rem .5rem; border: 1px solid #9aa1ad; border-radius: 4px; max-width: 100%; background: #fff; }
dl.member-summary { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0 0 1.25rem; }
dl.member-summary dt { font-weight: 600; color: var(--muted); } dl.member-summary dd { margin: 0; overflow-wrap: anywhere; }
button { white-space: nowrap; font: inherit; padding: .4rem .85rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary, a.button.secondary { background: #fff; color: var(--ink); border-color: #9aa1ad; }
button.danger { background: var(--err-line); border-color: var(--err-line); }
a.button { display: inline-block; padding: .4rem .85rem; border-radius: 4px; text-decoration: none; }
.actions { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; margin: 1rem 0; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }

/* Phones: the page never scrolls sideways; tables become one card per row. */
@media (max-width: 40rem) {
  header { padding: .6rem 1rem; } main { padding: 1rem; }
  header form { margin-left: 0; }
  table, thead, tbody, tr, th, td { display: block; width: 100%; }
  thead { position: absolute; left: -9999px; }
  tr { border: 1px solid var(--line); border-radius: 6px; margin-bottom: .75rem; background: var(--card); }
  td { border-bottom: 1px solid #eef0f4; overflow-wrap: anywhere; }
  dl.member-summary { grid-template-columns: 1fr; }
  td[data-label]::before { content: attr(data-label); display: block; font-size: .8rem; font-weight: 600; color: var(--muted); }
  input, select { width: 100%; }
}
`;

/** Asks before any form marked `data-confirm` is sent, with that attribute's text. */
export const SCRIPT = `document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form && form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
`;
