// What an HTML page the API serves (/docs, /console) answers with besides its markup: revalidated
// on every visit (its assets' URLs change when they do), its own Content-Security-Policy, no
// content sniffing, no referrer.
import type { Context } from 'koa';

export function serveHtmlPage(
  ctx: Context,
  csp: string,
  html: string,
  extraHeaders: Record<string, string> = {},
): void {
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  for (const [name, value] of Object.entries(extraHeaders)) ctx.set(name, value);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}
