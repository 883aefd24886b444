// The app's service worker, one per origin (issue 42 item 5). On the app's
// own domain the app is the whole site: the worker is /sw.js and its scope
// "/". On the main site every app has its own: /apps/{name}/sw.js with the
// scope /apps/{name}/ (the trailing slash keeps /apps/demo2 out of demo's),
// so one app's worker, and the push subscription it holds, never claims
// another app's pages. The server answers each with Service-Worker-Allowed
// naming that scope and no wider.

export interface WorkerApp {
  name: string;
  onDomain?: boolean;
}

export function workerScope(app: WorkerApp): string {
  return app.onDomain ? "/" : "/apps/" + encodeURIComponent(app.name) + "/";
}

export function workerScript(app: WorkerApp): string {
  return workerScope(app) + "sw.js";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ownRegistration is the app's registration on this origin, if there is
// one: getRegistration answers the one whose scope best covers the URL,
// which may be a wider one of an older version (scope "/" on the main site).
export async function ownRegistration(app: WorkerApp): Promise<ServiceWorkerRegistration | undefined> {
  const scope = new URL(workerScope(app), location.href).href;
  const reg = await navigator.serviceWorker.getRegistration(scope);
  return reg && reg.scope === scope ? reg : undefined;
}

export function registerWorker(app: WorkerApp): Promise<ServiceWorkerRegistration> {
  return navigator.serviceWorker.register(workerScript(app), { scope: workerScope(app) });
}

// waitForWorker polls every 100 ms (SPEC.md section 9: 30 tries, 50 when
// enabling push) for the app's active registration, registering it first
// when this origin has none yet.
export async function waitForWorker(app: WorkerApp, tries: number): Promise<ServiceWorkerRegistration | null> {
  let reg = await ownRegistration(app);
  if (!reg) reg = await registerWorker(app).catch(() => undefined);
  for (let i = 0; i < tries; i++) {
    if (reg?.active) return reg;
    await sleep(100);
    reg = (await ownRegistration(app)) ?? reg;
  }
  return reg?.active ? reg : null;
}

// dropSiteWideWorker unregisters the main site's worker of scope "/" that
// earlier versions registered for every app at once, once the app's own is
// in place, unless it still holds a push subscription (it is then the one
// that receives that member's pushes of the other apps; the push job
// prefers the app's own subscription once one is made).
export async function dropSiteWideWorker(app: WorkerApp): Promise<void> {
  if (app.onDomain) return;
  const root = new URL("/", location.href).href;
  const regs = await navigator.serviceWorker.getRegistrations();
  for (const reg of regs) {
    if (reg.scope !== root) continue;
    const sub = await reg.pushManager?.getSubscription().catch(() => null);
    if (!sub) await reg.unregister();
  }
}
