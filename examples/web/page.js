// The example page: a thread of questions and cited answers, kept in the URL (?thread=...).
// A reload lists the thread's turns from the server: finished answers come from their history
// document, and an answer still being generated is followed again from its first event.

import { ThreadView, subscribe } from "/unicite/unicite.js";

const url = new URL(window.location.href);
let threadId = url.searchParams.get("thread");
if (!threadId || !/^[A-Za-z0-9_-]{1,64}$/.test(threadId)) {
  threadId = `t-${Math.random().toString(36).slice(2, 10)}`;
  url.searchParams.set("thread", threadId);
  window.history.replaceState(null, "", url);
}

const thread = new ThreadView(document.querySelector("#thread"));
const form = document.querySelector("#ask");
const input = document.querySelector("#question");
const problem = document.querySelector("#problem");

// The stop button: the server cancels the answer, on whichever worker generates it, and the
// stream ends with the answer as far as it went (thread.message.cancelled).
async function stop(view) {
  await fetch(`/api/messages/${encodeURIComponent(view.messageId)}/cancel`, { method: "POST" });
}

function follow(turn) {
  const streaming = turn.status !== "complete" && turn.status !== "stopped" && turn.status !== "error";
  const view = thread.addTurn({
    question: turn.question,
    messageId: turn.message_id,
    onStop: streaming ? stop : null,
  });
  if (turn.status === "complete") view.complete(turn.message);
  else if (turn.status === "stopped") view.stop(turn.message);
  else if (turn.status === "error") view.fail(turn.error);
  else subscribe(view, turn.stream_url ?? `/api/messages/${encodeURIComponent(turn.message_id)}/stream`);
  return view;
}

function show(text) {
  problem.textContent = text;
  problem.hidden = !text;
}

async function ask(question) {
  show("");
  const response = await fetch(`/api/threads/${threadId}/messages`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ question }),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    show(typeof data.detail === "string" ? data.detail : `The question was refused (${response.status}).`);
    return;
  }
  input.value = "";
  const view = follow({ question, message_id: data.message_id, stream_url: data.stream_url, status: "pending" });
  view.element.scrollIntoView({ block: "nearest" });
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (question) ask(question);
});

input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

async function start() {
  const [config, history] = await Promise.all([
    fetch("/api/config").then((r) => r.json()),
    fetch(`/api/threads/${threadId}`).then((r) => r.json()),
  ]);
  if (config.replay) {
    document.querySelector("#offline").hidden = false;
    const holder = document.querySelector("#suggestions");
    for (const question of config.questions) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "suggestion";
      button.textContent = question;
      button.addEventListener("click", () => ask(question));
      holder.append(button);
    }
  }
  for (const turn of history.turns) follow(turn);
  document.body.dataset.ready = "true";
}

start();
