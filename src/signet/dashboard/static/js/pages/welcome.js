// Shown without a session: how to log in (a one-time link from the CLI), or why it failed.
import { h } from "../dom.js";

export function welcomePage(main, { query }) {
  const failed = query.get("login") === "failed";
  main.append(
    h("h1", {}, "Signet dashboard"),
    failed ? h("p", { class: "banner", role: "alert" },
      "That login link is invalid, already used or expired (links work once, for five minutes).") : null,
    query.get("logout") ? h("p", { class: "card" }, "You are logged out.") : null,
    h("div", { class: "card" },
      h("p", {}, "Log in with a one-time link from a terminal on this machine:"),
      h("pre", {}, "signet dashboard          # opens your browser\nsignet dashboard --print  # prints the link"),
      h("p", { class: "muted" }, "The link sets a session cookie for this daemon only; it lasts a day or until you log out.")));
}
