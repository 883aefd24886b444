import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import type { PageProps } from "./lib/types";
import { appHref } from "./lib/links";

type Props = PageProps<{ section: string; title: string; text: string }>;

// ComingSoon: a section that is not built yet, inside the app shell, so a
// footer tab never ends on a bare 404.
export default function ComingSoon(props: Props) {
  const app = props.app!;
  return (
    <Layout props={props}>
      <div className="placeholder coming-soon">
        <h1>{props.data.title}</h1>
        <p>{props.data.text}</p>
        <p>
          <a className="button" href={appHref(app)}>
            {"Back to " + displayTitle(app)}
          </a>
        </p>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{props.data.section + " · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="description" content={props.data.text} />
    </>
  );
}
