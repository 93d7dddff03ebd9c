// The console's one page (GET /console): a sign-in form and an empty frame the script fills.
// No inline script or style: the Content-Security-Policy allows only this origin's files, and
// no framing (clickjacking an approve button is the attack it closes).
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function consolePage(assets: { script: string; css: string; icon: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Rewards operator console</title>
<link rel="stylesheet" href="${assets.css}">
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
</head>
<body>
<form id="signin">
  <h1>Rewards operator console</h1>
  <label for="token">Operator token</label>
  <input id="token" name="token" type="password" autocomplete="off" required>
  <button type="submit">Sign in</button>
  <p id="signin-error" role="alert"></p>
</form>
<div id="console" hidden>
  <header><h1>Rewards operator console</h1><span id="who"></span><button id="signout" type="button">Sign out</button></header>
  <nav>
    <button type="button" data-view="claims">Claims</button>
    <button type="button" data-view="approvals">Approvals</button>
    <button type="button" data-view="statements">Statements</button>
    <button type="button" data-view="offers">Offers</button>
    <button type="button" data-view="audit">Audit log</button>
  </nav>
  <main id="view"></main>
  <section id="answer" aria-live="polite"></section>
</div>
<script src="${assets.script}"></script>
</body>
</html>
`;
}
