'use strict';
// Runs browser scenarios (internal/e2e/browser_test.go) in headless
// Chromium with playwright-core and prints one JSON object:
//   {"scenarios": [{"name", "url", "error", "shots": [...], "frames": [...]}]}
// Input (AVIARY_E2E_INPUT): {"chromium", "artifacts", "scenarios": [{"name",
// "start", "noJavaScript", "steps": [{"do", ...}]}]}. Each scenario gets a
// fresh browser context (no cookies); a failing step ends its scenario
// (error set, a "<name>-failure.png" screenshot kept), not the run.
const path = require('path');
const { chromium } = require('playwright-core');

const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const STEP_TIMEOUT = 30000; // generous: CI runs many stacks at once on few cores

// audit is a basic accessibility check of the current document: the
// problems found (none is a pass).
function audit() {
  const problems = [];
  if (!document.documentElement.lang) problems.push('<html> has no lang');
  if (!document.title.trim()) problems.push('no <title>');
  if (document.querySelectorAll('main').length !== 1) problems.push('want exactly one <main>');
  if (document.querySelectorAll('h1').length !== 1) problems.push('want exactly one <h1>');
  for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
    const label = [...(el.labels || [])].map((l) => l.textContent.trim()).join('') ||
      el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
    if (!label) problems.push(`${el.outerHTML} has no label`);
  }
  for (const b of document.querySelectorAll('button, input[type=submit], input[type=button]')) {
    if (!(b.textContent || b.value || b.getAttribute('aria-label') || '').trim()) problems.push(`${b.outerHTML} has no text`);
  }
  for (const img of document.querySelectorAll('img:not([alt])')) problems.push(`${img.outerHTML} has no alt`);
  return problems;
}

// elements describes every element of the document with an id: its text,
// its value (form fields) and whether it is visible, by id.
function elements() {
  const seen = {};
  for (const el of document.querySelectorAll('[id]')) {
    const box = el.getBoundingClientRect();
    seen[el.id] = {
      text: (el.innerText || '').trim(),
      value: typeof el.value === 'string' ? el.value : '',
      visible: el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && box.width > 0 && box.height > 0,
    };
  }
  return seen;
}

// navigation runs action and waits until the page has loaded the document
// it leads to (a form post, its 303 and the page after it).
async function navigation(page, action) {
  await Promise.all([page.waitForEvent('load', { timeout: STEP_TIMEOUT }), action()]);
}

async function bodyText(frame) {
  return frame.locator('body').innerText({ timeout: 2000 });
}

const steps = {
  async goto(page, step) {
    await page.goto(step.url, { waitUntil: 'load' });
  },
  async fill(page, step) {
    await page.getByLabel(step.label, { exact: true }).fill(step.value);
  },
  async click(page, step) {
    const button = page.getByRole('button', { name: step.label, exact: true });
    await navigation(page, () => button.click());
  },
  async expectText(page, step) {
    const text = await bodyText(page.mainFrame());
    if (!text.includes(step.text)) throw new Error(`page ${page.url()} does not show ${JSON.stringify(step.text)}; it shows:\n${text}`);
  },
  // expectURL checks where the page is now (no waiting: a page in
  // between, e.g. a consent page that should have been skipped, fails it).
  async expectURL(page, step) {
    if (!page.url().startsWith(step.url)) throw new Error(`page is at ${page.url()}, want ${step.url}...`);
  },
  // waitText waits, without reloading, until the element with id Label
  // shows exactly Text (a fragment the page's htmx polls, e.g. a job's
  // status in the console).
  async waitText(page, step) {
    await page.waitForFunction(([id, text]) => {
      const el = document.getElementById(id);
      return el !== null && el.innerText.trim() === text;
    }, [step.label, step.text], { timeout: STEP_TIMEOUT * 3, polling: 250 });
  },
  // put sends Value to URL with PUT from the browser's context (its
  // cookies), e.g. a compliance job's upload while a page stays open.
  async put(page, step) {
    const r = await page.request.put(step.url, { data: step.value, headers: { 'Content-Type': 'text/plain' } });
    if (!r.ok()) throw new Error(`PUT ${step.url}: ${r.status()} ${await r.text()}`);
  },
  // viewport resizes the page to Value ("390x844": a phone).
  async viewport(page, step) {
    const [width, height] = step.value.split('x').map(Number);
    await page.setViewportSize({ width, height });
  },
  // fitsWidth fails when the page scrolls sideways (its content is wider
  // than the viewport; a wide table scrolls inside its own box instead).
  async fitsWidth(page) {
    const [content, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    if (content > viewport) throw new Error(`page ${page.url()} is ${content}px wide in a ${viewport}px viewport`);
  },
  async waitURL(page, step) {
    await page.waitForURL((u) => u.href.startsWith(step.url), { timeout: STEP_TIMEOUT, waitUntil: 'load' });
  },
  async shot(page, step, sc, out, state) {
    const file = path.join(cfg.artifacts, `${sc.name}-${step.name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    const doc = state.document ? await state.document : {};
    out.shots.push({
      name: step.name, file, url: page.url(), status: doc.status || 0, headers: doc.headers || {},
      text: await bodyText(page.mainFrame()), problems: await page.evaluate(audit), elements: await page.evaluate(elements),
    });
  },
  // frames records what each child frame of the page shows.
  async frames(page, step, sc, out) {
    await page.locator('iframe').first().waitFor({ timeout: STEP_TIMEOUT });
    await page.waitForLoadState('load');
    await page.waitForTimeout(500);
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      const seen = { url: f.url(), inputs: 0, text: '' };
      try {
        seen.inputs = await f.locator('input, button').count();
        seen.text = await bodyText(f);
      } catch (e) {
        seen.text = `(unreadable: ${String(e.message).split('\n')[0]})`;
      }
      out.frames.push(seen);
    }
  },
};

async function runScenario(browser, sc) {
  const out = { name: sc.name, url: '', error: '', shots: [], frames: [] };
  const context = await browser.newContext({ javaScriptEnabled: !sc.noJavaScript, viewport: { width: 800, height: 600 },
    ignoreHTTPSErrors: !!sc.ignoreHTTPSErrors });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  const state = { document: null };
  // The last document the main frame received: status and headers.
  page.on('response', (r) => {
    if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) {
      state.document = r.allHeaders().then((headers) => ({ status: r.status(), headers }), () => ({ status: r.status(), headers: {} }));
    }
  });
  try {
    await steps.goto(page, { url: sc.start });
    for (const [i, step] of sc.steps.entries()) {
      const run = steps[step.do];
      if (!run) throw new Error(`step ${i}: unknown action ${JSON.stringify(step.do)}`);
      try {
        await run(page, step, sc, out, state);
      } catch (e) {
        throw new Error(`step ${i} ${JSON.stringify(step)}: ${e.message}`);
      }
    }
  } catch (e) {
    out.error = String(e.message || e);
    const file = path.join(cfg.artifacts, `${sc.name}-failure.png`);
    await page.screenshot({ path: file, fullPage: true }).then(() => { out.error += `\n(screenshot: ${file})`; }, () => {});
  }
  out.url = page.url();
  await context.close();
  return out;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: cfg.chromium,
    headless: true,
    // Playwright gives each launch a fresh temporary profile
    // (--user-data-dir). Without the networking flags Chromium hangs on a
    // machine with no outside network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    timeout: 60000,
  });
  const result = { version: browser.version(), scenarios: [] };
  try {
    for (const sc of cfg.scenarios) result.scenarios.push(await runScenario(browser, sc));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
