import { createRoot } from "react-dom/client";
import { App } from "./App";
import { SharePage } from "./pages/Share";
import "./styles.css";

// A share link's public page needs no sign-in: it never renders the console (nor asks who is signed in).
const page = location.pathname.replace(/\/+$/, "") === "/chat/share" ? <SharePage /> : <App />;
createRoot(document.getElementById("root")!).render(page);
