import type { ReactNode } from "react";
import Footer from "../../islands/Footer";
import { Island } from "../../islands/Island";
import { footerHidden, footerProps } from "../lib/footer";
import type { PageProps } from "../lib/types";
import { Header } from "./Header";

// Layout is the frame of every app page: header, content, footer island.
export function Layout({ props, children, hideFooter }: { props: PageProps<any>; children: ReactNode; hideFooter?: boolean }) {
  const app = props.app;
  if (!app) return <main className="page">{children}</main>;
  const showFooter = !hideFooter && !footerHidden(props.path);
  return (
    <div className={"app-shell" + (showFooter ? " with-footer" : "")}>
      <Header app={app} />
      <main className="page">{children}</main>
      {showFooter && <Island name="Footer" component={Footer} props={footerProps(app, props)} when="idle" />}
    </div>
  );
}
