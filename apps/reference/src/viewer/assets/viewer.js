// The viewer's entry: the key (from the URL fragment once, then this tab's sessionStorage), the
// sidebar, and the view the fragment names (#session=<id>, #thread=<job>/<alias> or #stored=<id>).
import { createApi } from "./api.js";
import { homeView } from "./home-view.js";
import { createReader } from "./reader.js";
import { lonelyThreadView, sessionView } from "./session-view.js";
import { renderSidebar } from "./sidebar.js";
import { storedSessionView } from "./stored-session-view.js";

/** sessionStorage entry holding the API key: this tab only, gone when it closes. */
export const KEY_STORAGE = "stowage.viewer.key";

const $ = (id) => document.getElementById(id);
let view;
let sidebar;
let context;
const reader = createReader(() => context?.api);

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

/** Takes `key=` out of the fragment (and the address bar, and the history entry) into storage. */
function takeKeyFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const key = params.get("key");
  if (!key) return undefined;
  sessionStorage.setItem(KEY_STORAGE, key);
  params.delete("key");
  const rest = params.toString();
  history.replaceState(history.state, "", `${location.pathname}${location.search}${rest ? `#${rest}` : ""}`);
  return key;
}

function showKeyForm(message) {
  view?.dispose();
  view = undefined;
  context = undefined;
  $("reader").close();
  $("layout").hidden = true;
  $("forget-key").hidden = true;
  $("key-form").hidden = false;
  notice(message ?? "");
  $("key-input").focus();
}

function forgetKey(message) {
  sessionStorage.removeItem(KEY_STORAGE);
  showKeyForm(message);
}

function route() {
  if (!context) return;
  view?.dispose();
  const params = new URLSearchParams(location.hash.slice(1));
  const session = params.get("session");
  const thread = params.get("thread");
  const storedId = params.get("stored");
  const cut = thread?.lastIndexOf("/") ?? -1;
  if (session) view = sessionView(context, session);
  else if (storedId) view = storedSessionView(context, storedId);
  else if (thread && cut > 0) view = lonelyThreadView(context, thread.slice(0, cut), thread.slice(cut + 1));
  else view = homeView(context.api);
  $("main").replaceChildren(view.element);
  sidebar.markActive(location.hash);
  window.scrollTo(0, 0);
}

function start(key) {
  const api = createApi(key, {
    // A refusal only counts for the key in use (a late answer for an earlier key is ignored).
    onUnauthorized: (err) => {
      if (context?.api === api) {
        // Said for a person at the form, not an HTTP client: what happened and what to do.
        forgetKey(
          `This key was not accepted (${err.code}): it may be mistyped, revoked, or from another deployment. Paste another one.`,
        );
      }
    },
  });
  view?.dispose();
  view = undefined;
  context = { api, reader };
  $("key-form").hidden = true;
  $("layout").hidden = false;
  $("forget-key").hidden = false;
  notice("");
  sidebar = renderSidebar($("sidebar"), api);
  route();
}

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const key = $("key-input").value.trim();
  if (!key) return;
  $("key-input").value = "";
  sessionStorage.setItem(KEY_STORAGE, key);
  start(key);
});
$("forget-key").addEventListener("click", () => forgetKey());
window.addEventListener("hashchange", () => {
  const fresh = takeKeyFromFragment();
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (key && (fresh || !context)) start(key);
  else route();
});

takeKeyFromFragment();
const stored = sessionStorage.getItem(KEY_STORAGE);
if (stored) start(stored);
else showKeyForm();
