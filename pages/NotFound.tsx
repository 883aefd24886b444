import type { PageModule } from "./registry";

function NotFoundPage() {
  return (
    <main className="not-found">
      <h1>Page not found</h1>
      <p>The page you are looking for does not exist.</p>
    </main>
  );
}

const page: PageModule = {
  component: NotFoundPage,
  head: () => <title>Not found</title>,
  status: () => 404,
};
export default page;
