import type { PageProps } from "./lib/types";

// ErrorPage answers unknown apps and pages (404) and other failures.
export default function ErrorPage(props: PageProps) {
  const notFound = props.status === 404;
  return (
    <main className="page placeholder">
      <h1>{notFound ? "Not found" : "Something went wrong"}</h1>
      <p>{props.error}</p>
      <p className="form-actions centered">
        {/* A failure that may pass (503: the database, the cache) offers
            Retry (SPEC.md section 8: 'Failed to load app data' with Retry). */}
        {props.status === 503 && (
          <a className="button" href={props.path}>
            Retry
          </a>
        )}
        <a className={"button" + (props.status === 503 ? " button-secondary" : "")} href="/apps">
          Go to Marquee
        </a>
      </p>
    </main>
  );
}

export function head(props: PageProps) {
  return (
    <>
      <title>{props.status === 404 ? "Not found" : "Error"}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}

export function status(props: PageProps) {
  return props.status ?? 500;
}
