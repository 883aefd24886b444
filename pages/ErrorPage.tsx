import type { PageProps } from "./lib/types";

// ErrorPage answers unknown apps and pages (404) and other failures.
export default function ErrorPage(props: PageProps) {
  const notFound = props.status === 404;
  return (
    <main className="page placeholder">
      <h1>{notFound ? "Not found" : "Something went wrong"}</h1>
      <p>{props.error}</p>
      <p>
        <a className="button" href="/apps">
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
