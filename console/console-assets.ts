// The console's one stylesheet and one small script, served from our origin (the policy allows no
// inline style or script). Colours meet WCAG 2.2 AA against their backgrounds (text at least
// 4.5:1, the focus ring and borders at least 3:1); the layout holds from 360 px up.
export const CONSOLE_STYLESHEET = `
*, *::before, *::after { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; font-size: 1rem; line-height: 1.5; margin: 0; color: #1b1b1b; background: #f6f6f4; }
a { color: #1d4f91; }
a:visited { color: #4c2c92; }
:focus-visible { outline: 3px solid #ffbf47; outline-offset: 0; box-shadow: 0 0 0 5px #1b1b1b; }
.skip-link { position: absolute; left: -9999px; top: 0; background: #ffbf47; color: #1b1b1b; padding: 0.5rem 1rem; z-index: 10; }
.skip-link:focus { left: 0; }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; margin: 0; padding: 0; overflow: hidden; clip: rect(0 0 0 0); border: 0; white-space: nowrap; }
.masthead { background: #1f3a5f; color: #fff; padding: 0.5rem 1rem; display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; justify-content: space-between; }
.masthead .service { margin: 0; font-weight: 700; }
.masthead a, .masthead a:visited { color: #fff; text-decoration: none; }
.masthead .who { margin: 0; display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; overflow-wrap: anywhere; }
.link-button { background: none; border: 0; color: #fff; text-decoration: underline; font: inherit; cursor: pointer; padding: 0.25rem; }
nav { background: #fff; border-bottom: 1px solid #6b6b6b; }
.nav { list-style: none; margin: 0 auto; padding: 0 1rem; display: flex; flex-wrap: wrap; gap: 0 1.25rem; max-width: 64rem; }
.nav a { display: inline-block; padding: 0.6rem 0; }
.nav a[aria-current=page] { font-weight: 700; color: #1b1b1b; border-bottom: 4px solid #1d4f91; }
main { display: block; max-width: 64rem; margin: 0 auto; padding: 1rem 1rem 3rem; overflow-wrap: anywhere; }
main:focus { outline: none; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.3rem; margin: 1.5rem 0 0.5rem; }
.field { margin: 0 0 1.25rem; }
.field--error { border-left: 5px solid #b00020; padding-left: 0.75rem; }
label, legend { display: block; font-weight: 700; }
fieldset { border: 0; margin: 0; padding: 0; min-width: 0; }
.hint { color: #4a4a4a; margin: 0.1rem 0 0.3rem; }
.field-error { color: #b00020; font-weight: 700; margin: 0.1rem 0 0.3rem; }
.input { width: 100%; max-width: 36rem; padding: 0.5rem; font: inherit; border: 2px solid #1b1b1b; border-radius: 0; background: #fff; color: #1b1b1b; }
.input-short { width: 100%; max-width: 12rem; padding: 0.5rem; font: inherit; border: 2px solid #1b1b1b; background: #fff; color: #1b1b1b; }
textarea.input { min-height: 5rem; }
[aria-invalid=true] { border-color: #b00020; }
.choices { display: grid; gap: 0.4rem; }
.choice { display: grid; grid-template-columns: 1.6rem 1fr; column-gap: 0.5rem; align-items: start; }
.choice input { width: 1.4rem; height: 1.4rem; margin: 0.1rem 0 0; }
.choice label { font-weight: 400; }
.choice .hint { grid-column: 2; margin: 0; }
.button { display: inline-block; font: inherit; font-weight: 700; padding: 0.5rem 1rem; border: 2px solid transparent; border-radius: 0; cursor: pointer; text-decoration: none; text-align: center; margin: 0 0.5rem 0.5rem 0; }
.button--primary, a.button--primary, a.button--primary:visited { background: #00703c; color: #fff; }
.button--secondary, a.button--secondary, a.button--secondary:visited { background: #fff; color: #1b1b1b; border-color: #1b1b1b; }
.button--warning { background: #b00020; color: #fff; }
.actions { display: flex; flex-wrap: wrap; align-items: center; }
.error-summary { border: 5px solid #b00020; background: #fff; padding: 1rem; margin: 0 0 1.5rem; }
.error-summary h2 { margin-top: 0; }
.error-summary a { color: #b00020; font-weight: 700; }
.panel { border: 5px solid #00703c; background: #fff; padding: 0.5rem 1rem; margin: 0 0 1rem; }
.warning-text { border-left: 5px solid #b00020; padding-left: 0.75rem; }
.notice { border-left: 5px solid #1d4f91; background: #fff; padding: 0.5rem 0.75rem; }
.table-wrap { overflow-x: auto; margin: 0 0 1.5rem; position: relative; }
table { border-collapse: collapse; width: 100%; background: #fff; }
caption { text-align: left; font-weight: 700; padding: 0.5rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.5rem; border-bottom: 1px solid #6b6b6b; overflow-wrap: anywhere; }
th { white-space: nowrap; }
td form { display: inline; }
td .button { margin: 0 0.25rem 0.25rem 0; padding: 0.25rem 0.6rem; }
code { font-family: ui-monospace, monospace; font-size: 0.95em; overflow-wrap: anywhere; }
.secret { font-family: ui-monospace, monospace; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
.facts dt { font-weight: 700; }
.facts dd { margin: 0; }
.tag { display: inline-block; padding: 0 0.4rem; font-weight: 700; background: #1b1b1b; color: #fff; }
.tag--suspended { background: #8a4b00; }
.tag--inactive { background: #4a4a4a; }
.scope-list { margin: 0; padding-left: 1.1rem; }
.facts dd { overflow-wrap: anywhere; }
.stats { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; list-style: none; padding: 0; margin: 0 0 1rem; }
.stats li { background: #fff; border-left: 5px solid #1d4f91; padding: 0.25rem 0.75rem; }
.stats strong { font-size: 1.3rem; margin-right: 0.3rem; }
.inline-form { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: flex-end; margin: 0 0 1rem; }
.inline-form .field { margin: 0; }
.print-only { display: none; }
@media (max-width: 40rem) {
  h1 { font-size: 1.4rem; }
  .facts { grid-template-columns: 1fr; }
}
/* An evacuation list on paper: the list alone, black on white, every row kept whole. */
@media print {
  .skip-link, .masthead, nav, .no-print, .button, form { display: none !important; }
  .print-only { display: block; }
  body, main, table { background: #fff; color: #000; }
  main { max-width: none; padding: 0; }
  .table-wrap { overflow: visible; }
  tr { break-inside: avoid; }
  th, td { border-bottom: 1px solid #000; }
}
`;

// Progressive enhancement only: the error summary takes focus on load; a Copy button appears
// beside a secret; a region marked data-live-every="N" is fetched again every N seconds and
// replaced in place (the front desk, an import's progress), which a Refresh button does without
// a script. Every page works without this.
export const CONSOLE_SCRIPT = `'use strict';
document.addEventListener('DOMContentLoaded', function () {
  var summary = document.querySelector('.error-summary');
  if (summary) summary.focus();
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var field = document.getElementById(button.getAttribute('data-copy'));
    if (!field || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(field.value).then(function () { button.textContent = 'Copied'; });
    });
  });
  document.querySelectorAll('[data-live-every]').forEach(function (region) {
    var seconds = Number(region.getAttribute('data-live-every'));
    if (!region.id || !(seconds >= 2)) return;
    var refresh = function () {
      fetch(window.location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (text) {
          if (text === null) return;
          var fresh = new DOMParser().parseFromString(text, 'text/html').getElementById(region.id);
          if (fresh) {
            region.innerHTML = fresh.innerHTML;
            seconds = Number(fresh.getAttribute('data-live-every')) || 0;
          } else {
            seconds = 0;
          }
        })
        .catch(function () { return undefined; })
        .then(function () { if (seconds >= 2) window.setTimeout(refresh, seconds * 1000); });
    };
    window.setTimeout(refresh, seconds * 1000);
  });
});
`;
