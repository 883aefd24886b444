import { Layout } from "./components/Layout";
import { displayTitle } from "./components/Header";
import { Island } from "./lib/Island";
import DonateModal from "../islands/DonateModal";
import { formatMoney } from "./lib/format";
import type { DonationTierView, DonorStanding, PageProps } from "./lib/types";
import { appBase, appHref } from "./lib/links";

type Props = PageProps<{
  suggestedAmounts: number[];
  tiers: DonationTierView[];
  balance: number;
  standing: DonorStanding;
  done: boolean;
  error: string;
  amount: string;
  cardEnabled: boolean;
}>;

// Donate: 'Show Your Support' as a page, where the header's Donate link
// leads without JavaScript. The same form as the modal posts here.
export default function Donate(props: Props) {
  const app = props.app!;
  const d = props.data;
  return (
    <Layout props={props}>
      <div className="donate-page">
        <h1>Show Your Support</h1>
        {d.done && (
          <p className="notice" role="status">
            Thank you for your support!
          </p>
        )}
        {d.error && (
          <p className="field-error" role="alert">
            {d.error}
          </p>
        )}
        <p className="meta">
          {"Wallet balance: " + formatMoney(d.balance, "USD") + " · You have given " + formatMoney(d.standing.total, "USD")}
          {d.standing.tier && <span className="badge tier-badge">{d.standing.tier.name}</span>}
          {" · "}
          <a className="add-funds-link" href={appBase(app) + "/transactions?return=donate#add-funds"}>Add funds</a>
        </p>
        <Island
          name="DonateModal"
          component={DonateModal}
          props={{ appId: app.id, appName: app.name, suggestedAmounts: d.suggestedAmounts, tiers: d.tiers, asPage: true, initialAmount: d.amount,
            publishableKey: d.cardEnabled ? props.stripeKey ?? "" : "" }}
        />
        <p>
          <a href={appHref(app)}>{"Back to " + displayTitle(app)}</a>
        </p>
      </div>
    </Layout>
  );
}

export function head(props: Props) {
  return (
    <>
      <title>{"Donate · " + (props.app ? displayTitle(props.app) : "Marquee")}</title>
      <meta name="robots" content="noindex" />
    </>
  );
}
