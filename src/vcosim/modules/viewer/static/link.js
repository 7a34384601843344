// vcosim viewer: the page's websocket and its 25 Hz input timer, in a worker of their own.
// A slow frame blocks the page's thread, its timers included, so inputs sent from there come
// as seldom as frames are drawn; here drawing cannot delay them. The page posts the latest
// input (null: stop, e.g. a hidden tab) and commands; frames come back as they arrive.
const INPUT_HZ = 25;  // as NightRider's input module sends

let ws = null;
let input = null;
let sent = 0;

function send(cmd) {
  if (!ws || ws.readyState !== WebSocket.OPEN) return false;
  ws.send(JSON.stringify(cmd));
  return true;
}

function connect(url) {
  ws = new WebSocket(url);
  ws.onopen = () => postMessage({ kind: 'open' });
  ws.onclose = () => {
    postMessage({ kind: 'close' });
    setTimeout(() => connect(url), 1000);
  };
  ws.onmessage = (ev) => postMessage({ kind: 'frame', data: ev.data });
}

onmessage = (ev) => {
  const m = ev.data;
  if (m.kind === 'connect') connect(m.url);
  else if (m.kind === 'input') input = m.input;
  else if (m.kind === 'send' && send(m.cmd)) postMessage({ kind: 'sent', type: m.cmd.type });
};

setInterval(() => {
  if (input && send(input)) postMessage({ kind: 'inputs', count: ++sent, at: Date.now() });
}, 1000 / INPUT_HZ);
