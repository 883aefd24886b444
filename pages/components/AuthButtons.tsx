// AuthButtons are the visitor's Sign In and Sign Up links to the auth site,
// which sends them back to this app afterwards.
export function AuthButtons({ authUrl, appName, className }: { authUrl: string; appName: string; className?: string }) {
  const q = "?app=" + encodeURIComponent(appName);
  return (
    <div className={"auth-buttons" + (className ? " " + className : "")}>
      <a className="button" href={authUrl + "/authenticate/signin" + q}>
        Sign In
      </a>
      <a className="button button-secondary" href={authUrl + "/authenticate/signup" + q}>
        Sign Up
      </a>
    </div>
  );
}
