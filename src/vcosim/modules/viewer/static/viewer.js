// vcosim viewer: the car on its terrain, HUD, dashboard, and driving from the browser.
// World frame as the vehicle's (ISO 8855): x forward at start, y left, z up. three.js runs
// z-up here, so positions from the bus are used as they are.
import * as THREE from './vendor/three.module.js';
import { gearLabel as labelOf, hudFigures } from './hud.js';
import { roadGroup } from './road.js';

THREE.Object3D.DEFAULT_UP.set(0, 0, 1);

const MAX_STEER = 35 * Math.PI / 180;  // full steering input = 35 deg road-wheel angle
const INPUT_HZ = 25;                   // controls read as often as link.js sends them
const HISTORY_S = 10;                  // dashboard window

// ---------------------------------------------------------------- terrain, as the vehicle's
function axis(coord, origin, cell, n) {
  // mirrors vcosim.vehicle.terrain._axis: indices, fraction, clamped at the edges
  if (n < 2) return [0, 0, 0];
  const f = (coord - origin) / cell;
  if (!(f >= 0)) return [0, 1, 0];
  const last = n - 1;
  if (f > last) return [last - 1, last, 1];
  const i0 = Math.min(Math.floor(f), last - 1);
  return [i0, i0 + 1, f - i0];
}

function sampleTerrain(t, x, y) {
  // bilinear height and friction, exactly as sample_terrain in the vehicle
  const [i0, i1, tx] = axis(x, t.origin[0], t.cell, t.nx);
  const [j0, j1, ty] = axis(y, t.origin[1], t.cell, t.ny);
  const bl = (a) => {
    const v00 = a[j0 * t.nx + i0], v01 = a[j0 * t.nx + i1];
    const v10 = a[j1 * t.nx + i0], v11 = a[j1 * t.nx + i1];
    return (1 - ty) * ((1 - tx) * v00 + tx * v01) + ty * ((1 - tx) * v10 + tx * v11);
  };
  return { height: bl(t.height), friction: bl(t.friction) };
}

function terrainMesh(t) {
  const group = new THREE.Group();
  if (t.nx * t.ny === 1) {  // flat ground: a large plane and a grid
    const plane = new THREE.Mesh(new THREE.PlaneGeometry(2000, 2000),
      new THREE.MeshLambertMaterial({ color: 0x6f8f4e }));
    plane.position.z = t.height[0];
    group.add(plane);
    const grid = new THREE.GridHelper(2000, 400, 0x30402a, 0x4f6a3d);
    grid.rotation.x = Math.PI / 2;
    grid.position.z = t.height[0] + 0.01;
    group.add(grid);
    return group;
  }
  const n = t.nx * t.ny;
  const pos = new Float32Array(n * 3), col = new Float32Array(n * 3);
  for (let j = 0; j < t.ny; j++) {
    for (let i = 0; i < t.nx; i++) {
      const k = j * t.nx + i;
      pos[3 * k] = t.origin[0] + i * t.cell;
      pos[3 * k + 1] = t.origin[1] + j * t.cell;
      pos[3 * k + 2] = t.height[k];
      const road = t.road ? t.road[k] : 0;
      const mu = Math.min(1, t.friction[k]);
      const c = road ? [0.35, 0.35, 0.37] : [0.25 + 0.2 * (1 - mu), 0.45 + 0.2 * mu, 0.2];
      col.set(c, 3 * k);
    }
  }
  const index = [];
  for (let j = 0; j < t.ny - 1; j++) {
    for (let i = 0; i < t.nx - 1; i++) {
      const a = j * t.nx + i, b = a + 1, c = a + t.nx, d = c + 1;
      index.push(a, b, d, a, d, c);
    }
  }
  const geo = new THREE.BufferGeometry();
  geo.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  geo.setAttribute('color', new THREE.BufferAttribute(col, 3));
  geo.setIndex(index);
  geo.computeVertexNormals();
  group.add(new THREE.Mesh(geo, new THREE.MeshLambertMaterial({ vertexColors: true })));
  // beyond the map the vehicle holds the edge height; a wide plane keeps the world from ending
  let low = Infinity;
  for (const h of t.height) low = Math.min(low, h);
  const skirt = new THREE.Mesh(new THREE.PlaneGeometry(6000, 6000),
    new THREE.MeshLambertMaterial({ color: 0x5d7d43 }));
  skirt.position.z = low - 0.05;
  group.add(skirt);
  return group;
}

// ---------------------------------------------------------------- the car
function makeCar(g) {
  const car = new THREE.Group();
  const length = g.a + g.b + 1.2, width = 2 * g.c - 0.1;
  const paint = new THREE.MeshLambertMaterial({ color: 0xc0272d });
  const body = new THREE.Mesh(new THREE.BoxGeometry(length, width, 0.6), paint);
  body.position.set((g.a - g.b) / 2, 0, -0.05);
  car.add(body);
  const cabin = new THREE.Mesh(new THREE.BoxGeometry(length * 0.45, width * 0.85, 0.55),
    new THREE.MeshLambertMaterial({ color: 0x222a33 }));
  cabin.position.set((g.a - g.b) / 2 - 0.3, 0, 0.5);
  car.add(cabin);
  const lamp = new THREE.MeshBasicMaterial({ color: 0xfff3b0 });
  for (const s of [-1, 1]) {
    const l = new THREE.Mesh(new THREE.BoxGeometry(0.05, 0.3, 0.15), lamp);
    l.position.set(body.position.x + length / 2, s * (width / 2 - 0.3), 0.05);
    car.add(l);
  }
  const tyre = new THREE.MeshLambertMaterial({ color: 0x111111 });
  const rim = new THREE.MeshLambertMaterial({ color: 0xbbbbbb });
  const wheels = [];
  const corners = [[g.a, g.c], [g.a, -g.c], [-g.b, g.c], [-g.b, -g.c]];  // FL FR RL RR
  for (const [x, y] of corners) {
    const steer = new THREE.Group();      // turns about z (front wheels)
    steer.position.set(x, y, -0.5);
    const spin = new THREE.Group();       // turns about the axle (y)
    const t = new THREE.Mesh(new THREE.CylinderGeometry(g.radius, g.radius, 0.22, 20), tyre);
    spin.add(t);
    const spoke = new THREE.Mesh(new THREE.BoxGeometry(g.radius * 1.6, 0.24, 0.08), rim);
    spin.add(spoke);
    steer.add(spin);
    car.add(steer);
    wheels.push({ steer, spin, x, y });
  }
  return { car, wheels };
}

// ---------------------------------------------------------------- page state
const canvas = document.getElementById('scene');
const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.autoClear = false;
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x9cc3e6);
scene.add(new THREE.HemisphereLight(0xffffff, 0x445533, 1.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(50, -30, 80);
scene.add(sun);

const mainCam = new THREE.PerspectiveCamera(60, 1, 0.1, 5000);
const mirrorCam = new THREE.PerspectiveCamera(45, 3, 0.1, 2000);
const CAMERAS = ['chase', 'driver'];
// The rear-view mirror shows its camera's image flipped left-to-right, as a mirror does: the
// camera renders into a texture, drawn on a quad whose u coordinate runs right to left.
const mirrorTarget = new THREE.WebGLRenderTarget(512, 171);
mirrorTarget.texture.repeat.set(-1, 1);
mirrorTarget.texture.offset.set(1, 0);
const mirrorScene = new THREE.Scene();
mirrorScene.add(new THREE.Mesh(new THREE.PlaneGeometry(2, 2),
                               new THREE.MeshBasicMaterial({ map: mirrorTarget.texture })));
const mirrorQuadCam = new THREE.OrthographicCamera(-1, 1, 1, -1, 0, 1);

const vc = {
  connected: false, frames: 0, sent: {}, camera: 'chase', terrain: null, geometry: null,
  state: { x: 0, y: 0, z: 0, roll: 0, pitch: 0, yaw: 0, speed: 0, rpm: 0, throttle: 0, brake: 0,
           steering: 0, gear: null, rtf: null, latency_ms: null, connected: false },
  gear: 'D', lastError: null,
  sampleTerrain: (x, y) => sampleTerrain(vc.terrain, x, y),
  wheelPositions: () => wheelWorld().map((p) => [p.x, p.y]),
  input: { throttle: 0, brake: 0, steering: 0 },
  world: { vehicles: [], at: 0, frames: 0 },  // a world's vehicles (docs/viewer.md)
  target: null,  // the vehicle the camera follows: null for the ego, else a world row
};
window.vcosim = vc;
vc.mirror = { flipped: mirrorTarget.texture.repeat.x < 0 };
let carParts = null;
let wheelAngle = 0;
const history = [];

// ---------------------------------------------------------------- websocket, in a worker
// link.js owns the websocket and sends the latest input at 25 Hz, whatever drawing does.
const link = new Worker('link.js');
vc.link = link;
function send(cmd) { link.postMessage({ kind: 'send', cmd }); }

function connect() {
  link.postMessage({ kind: 'connect', url: `ws://${location.host}/ws` });
  link.onmessage = (ev) => {
    const m = ev.data;
    if (m.kind === 'open') { vc.connected = true; status('connected'); }
    else if (m.kind === 'close') { vc.connected = false; status('disconnected — retrying'); }
    else if (m.kind === 'sent') vc.sent[m.type] = (vc.sent[m.type] || 0) + 1;
    else if (m.kind === 'inputs') inputSent(m.at);
    else if (m.kind === 'frame') receive(JSON.parse(m.data));
  };
}

vc.inputTimes = [];  // when the worker's last inputs went (Date.now()), for tests
function inputSent(at) {
  vc.inputTimes.push(at);
  if (vc.inputTimes.length > 250) vc.inputTimes.shift();
}

function receive(f) {
  if (f.type === 'state') {
    Object.assign(vc.state, f);
    vc.frames += 1;
    history.push([performance.now() / 1000, f.speed * 3.6, f.rpm, f.throttle, f.brake,
                  f.rtf ?? NaN, f.connected ? (f.latency_ms ?? NaN) : NaN]);
    sendGround();
  } else if (f.type === 'world') {
    vc.world = { vehicles: f.vehicles, at: performance.now() / 1000, frames: vc.world.frames + 1 };
    updateSignals(f.signals || []);
    updateOthers();
  } else if (f.type === 'camera') {
    vc.camera = CAMERAS[(CAMERAS.indexOf(vc.camera) + 1) % CAMERAS.length];
    cameraName();
  } else if (f.type === 'hello') {
    vc.geometry = f.geometry; vc.sendGroundEnabled = f.send_ground;
  } else if (f.type === 'shutdown') {
    status('the bus shut down');
  } else if (f.type === 'error') {
    vc.lastError = f.error;
  }
}
function status(text) { document.getElementById('status').textContent = text; }

// ---------------------------------------------------------------- a world's other vehicles
// Each is a box of its length and width from WorldVehicle, placed at its WorldPose (20 Hz at
// most, carried forward along its heading between frames); the ego is the car itself, drawn
// from its own FMVM (or from its WorldPose while no FMVM has come). The camera's vehicle is
// painted amber.
const unitBox = new THREE.BoxGeometry(1, 1, 1);
const otherPaint = new THREE.MeshLambertMaterial({ color: 0x3a6ea5 });
const targetPaint = new THREE.MeshLambertMaterial({ color: 0xffc107 });
const others = new Map();  // row -> { group, box, v }

function egoEntry() { return vc.world.vehicles.find((v) => v.ego) || null; }
function ownPose() { return (vc.state.poses || 0) > 0 || !egoEntry(); }  // FMVM has come

function updateOthers() {
  const seen = new Set();
  for (const v of vc.world.vehicles) {
    if (v.ego) continue;  // the car itself
    seen.add(v.row);
    let o = others.get(v.row);
    if (!o) {
      const group = new THREE.Group();
      const box = new THREE.Mesh(unitBox, otherPaint);
      group.add(box);
      scene.add(group);
      o = { group, box, v };
      others.set(v.row, o);
    }
    o.v = v;
    const g = vc.geometry || { a: 1.3, b: 1.3, c: 0.8 };
    const length = v.length ?? g.a + g.b + 1.2, width = v.width ?? 2 * g.c;
    o.box.scale.set(length, width, 1.3);
    o.box.position.set(v.offset || 0, 0, 0.05);
    o.box.material = vc.target === v.row ? targetPaint : otherPaint;
  }
  for (const [row, o] of others) {
    if (!seen.has(row)) { scene.remove(o.group); others.delete(row); }
  }
  if (vc.target !== null && !vc.world.vehicles.some((v) => v.row === vc.target)) vc.target = null;
  cameraName();
}

function placeOthers() {
  const ahead = Math.min(0.1, Math.max(0, performance.now() / 1000 - vc.world.at));
  for (const { group, v } of others.values()) {
    const run = v.speed * ahead;  // carried forward between the 20 Hz frames
    group.position.set(v.x + run * Math.cos(v.yaw), v.y + run * Math.sin(v.yaw), v.z);
    group.rotation.set(v.roll, v.pitch, v.yaw, 'ZYX');
  }
}

// V / Shift+V (a gamepad's d-pad right / left): the camera on the next / previous vehicle,
// the ego first. Only this page's view changes: nothing goes on the bus.
function cycleTarget(dir) {
  const rows = [null, ...vc.world.vehicles.filter((v) => !v.ego).map((v) => v.row)];
  const i = rows.indexOf(vc.target);
  vc.target = rows[((i < 0 ? 0 : i) + dir + rows.length) % rows.length];
  updateOthers();
  cameraName();
}
vc.cycleTarget = cycleTarget;

function targetName() {
  if (vc.target === null) return egoEntry()?.name ?? null;
  return others.get(vc.target)?.v.name ?? null;
}
function cameraName() {
  const name = vc.world.vehicles.length ? targetName() : null;
  document.getElementById('camera-name').textContent = name ? `${vc.camera} · ${name}` : vc.camera;
}
vc.targetName = targetName;
vc.drawnRows = () => [...others.keys()];  // the vehicles drawn as boxes, for tests

// ---------------------------------------------------------------- a world's traffic lights
// A head per link of each light (WorldSignal: SUMO's), a ball at its lane's stop line, the
// heads of one lane stacked, lit in its state's colour: red, amber, green, grey when off.
const signalBall = new THREE.SphereGeometry(0.25, 12, 8);
const signalPaint = { 0: 0xe53935, 1: 0xffb300, 2: 0x43a047, [-1]: 0x606060 };
const heads = new Map();  // index -> { mesh, state }

function updateSignals(signals) {
  for (const h of signals) {
    let o = heads.get(h.index);
    if (!o) {
      const mesh = new THREE.Mesh(signalBall, new THREE.MeshBasicMaterial());
      scene.add(mesh);
      o = { mesh, state: null };
      heads.set(h.index, o);
    }
    o.mesh.position.set(h.x, h.y, h.z);
    if (o.state !== h.state) o.mesh.material.color.setHex(signalPaint[h.state] ?? signalPaint[-1]);
    o.state = h.state;
  }
}
vc.signalStates = () => Object.fromEntries([...heads].map(([i, o]) => [i, o.state]));  // tests
vc.cameraPosition = () => mainCam.position.toArray();

// ---------------------------------------------------------------- VMFM from the page's terrain
function wheelWorld() {
  if (!carParts) return [];
  carParts.car.updateMatrixWorld();
  return carParts.wheels.map((w) => new THREE.Vector3(w.x, w.y, 0).applyMatrix4(carParts.car.matrixWorld));
}
function sendGround() {
  // once per state frame: the server already limits those to its rate
  if (!vc.sendGroundEnabled || !vc.terrain || !carParts) return;
  placeCar();
  const s = wheelWorld().map((p) => sampleTerrain(vc.terrain, p.x, p.y));
  send({ type: 'ground', height: s.map((v) => v.height), friction: s.map((v) => v.friction) });
}

// ---------------------------------------------------------------- driving: keyboard, gamepad
const keys = new Set();
let active = false;  // send inputs only once this page has been used to drive
window.addEventListener('keydown', (e) => {
  if (e.repeat) return;
  const k = e.key.toLowerCase();
  keys.add(k);
  if (k === 'c') send({ type: 'camera' });
  else if (k === 'v') cycleTarget(e.shiftKey ? -1 : 1);
  else if (k === 'h') send({ type: 'horn' });
  else if (k === 'q' || k === 'pagedown') shift(-1);
  else if (k === 'e' || k === 'pageup') shift(1);
  else if (['w', 's', 'a', 'd', 'arrowup', 'arrowdown', 'arrowleft', 'arrowright'].includes(k)) {
    active = true; e.preventDefault();
  }
});
window.addEventListener('keyup', (e) => keys.delete(e.key.toLowerCase()));
// A key let go elsewhere never comes back as keyup: forget them all when focus goes.
window.addEventListener('blur', () => keys.clear());

const GEARS = ['R', 'N', 'D'];
function shift(dir) {
  active = true;
  const i = Math.max(0, Math.min(GEARS.length - 1, GEARS.indexOf(vc.gear) + dir));
  vc.gear = GEARS[i];
  sendInput(dir);
}

function toByte(v) { return Math.max(0, Math.min(255, Math.round(v * 255))); }
function steeringByte(s) {  // +1 full left -> 0, 0 -> 128, -1 full right -> 255
  return Math.max(0, Math.min(255, Math.round(s >= 0 ? 128 - 128 * s : 128 - 127 * s)));
}
function inputCommand(shiftDir = 0) {
  const i = vc.input;
  return { type: 'input', throttle: toByte(i.throttle), brake: toByte(i.brake),
           steering: steeringByte(i.steering), shift: shiftDir };
}
function sendInput(shiftDir = 0) { send(inputCommand(shiftDir)); }

const pads = { buttons: [] };
function readControls(dt) {
  const i = vc.input;
  const down = (...names) => names.some((n) => keys.has(n));
  const target = down('a', 'arrowleft') ? 1 : down('d', 'arrowright') ? -1 : 0;
  const rate = 2.5 * dt;  // keyboard steering ramps, full lock in 0.4 s
  i.steering += Math.max(-rate, Math.min(rate, target - i.steering));
  i.throttle = down('w', 'arrowup') ? 1 : 0;
  i.brake = down('s', 'arrowdown') ? 1 : 0;
  const pad = navigator.getGamepads ? [...navigator.getGamepads()].find((p) => p) : null;
  if (pad) {
    const b = (n) => (pad.buttons[n] ? pad.buttons[n].value : 0);
    const steer = -(pad.axes[0] || 0);
    if (Math.abs(steer) > 0.05 || b(7) > 0.02 || b(6) > 0.02) active = true;
    if (Math.abs(steer) > 0.05) i.steering = steer;
    i.throttle = Math.max(i.throttle, b(7));
    i.brake = Math.max(i.brake, b(6));
    const edges = [[4, () => shift(-1)], [5, () => shift(1)], [3, () => send({ type: 'camera' })],
                   [1, () => send({ type: 'horn' })], [15, () => cycleTarget(1)],
                   [14, () => cycleTarget(-1)]];
    for (const [n, act] of edges) {
      const now = b(n) > 0.5;
      if (now && !pads.buttons[n]) act();
      pads.buttons[n] = now;
    }
  }
}

// The controls are read on a timer of their own, not per drawn frame; the worker repeats the
// latest at 25 Hz. A hidden page lets go of the throttle at once and then sends nothing: the
// server's dead-man rule (docs/viewer.md) then brakes, as for a page that went silent.
let lastControls = performance.now();
function controlTick() {
  const now = performance.now(), dt = Math.min(0.1, (now - lastControls) / 1000);
  lastControls = now;
  if (document.hidden) return;
  readControls(dt);
  link.postMessage({ kind: 'input', input: active ? inputCommand() : null });
}
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) return;
  keys.clear();
  link.postMessage({ kind: 'input', input: null });
  if (active) {
    vc.input.throttle = 0;
    sendInput();
  }
});

// ---------------------------------------------------------------- drawing
function placeCar() {
  const s = ownPose() ? vc.state : { ...vc.state, ...egoEntry() };
  carParts.car.position.set(s.x, s.y, s.z);
  carParts.car.rotation.set(s.roll, s.pitch, s.yaw, 'ZYX');
}

function updateCar(dt) {
  const s = vc.state, g = vc.geometry;
  placeCar();
  wheelAngle += (s.speed / g.radius) * dt;
  carParts.car.updateMatrixWorld();
  for (const [n, w] of carParts.wheels.entries()) {
    w.spin.rotation.y = wheelAngle;
    w.steer.rotation.z = n < 2 ? s.steering * MAX_STEER : 0;
    // sit the wheel on the ground below it (the suspension's travel, seen from outside)
    const p = new THREE.Vector3(w.x, w.y, 0).applyMatrix4(carParts.car.matrixWorld);
    const h = vc.terrain ? sampleTerrain(vc.terrain, p.x, p.y).height : 0;
    w.steer.position.z = Math.max(-0.9, Math.min(-0.2, h + g.radius - s.z));
  }
}

function updateCameras() {
  const other = vc.target === null ? null : others.get(vc.target);
  const car = other ? other.group : carParts.car;
  car.updateMatrixWorld();
  const at = (x, y, z) => new THREE.Vector3(x, y, z).applyMatrix4(car.matrixWorld);
  if (vc.camera === 'chase') {
    const yaw = car.rotation.z, p = car.position;
    mainCam.position.set(p.x - 9 * Math.cos(yaw), p.y - 9 * Math.sin(yaw), p.z + 3.2);
    mainCam.lookAt(p.x, p.y, p.z + 0.8);
  } else {
    mainCam.position.copy(at(-0.2, 0.45, 0.75));
    mainCam.lookAt(at(20, 0.45, 0.3));
  }
  const g = vc.geometry;  // the mirror looks back from just behind the tail
  mirrorCam.position.copy(at(-g.b - 0.7, 0, 0.9));
  mirrorCam.lookAt(at(-30, 0, 0.4));
}

function drawGauge() {
  const c = document.getElementById('gauge'), g = c.getContext('2d');
  const hud = vc.hud();
  const kmh = hud.speed * 3.6, max = 240, r = 80, cx = 90, cy = 90;
  g.clearRect(0, 0, c.width, c.height);
  g.fillStyle = 'rgba(0,0,0,0.55)'; g.beginPath(); g.arc(cx, cy, r + 8, 0, 2 * Math.PI); g.fill();
  const angle = (v) => Math.PI * 0.75 + (v / max) * Math.PI * 1.5;
  g.strokeStyle = '#fff'; g.fillStyle = '#fff'; g.font = '11px sans-serif'; g.textAlign = 'center';
  for (let v = 0; v <= max; v += 20) {
    const a = angle(v);
    g.beginPath(); g.moveTo(cx + Math.cos(a) * (r - 8), cy + Math.sin(a) * (r - 8));
    g.lineTo(cx + Math.cos(a) * r, cy + Math.sin(a) * r); g.stroke();
    if (v % 40 === 0) g.fillText(String(v), cx + Math.cos(a) * (r - 20), cy + Math.sin(a) * (r - 20) + 4);
  }
  const a = angle(Math.min(max, Math.abs(kmh)));
  g.strokeStyle = '#ff3b30'; g.lineWidth = 3;
  g.beginPath(); g.moveTo(cx, cy); g.lineTo(cx + Math.cos(a) * (r - 10), cy + Math.sin(a) * (r - 10)); g.stroke();
  g.lineWidth = 1;
  document.getElementById('speed').textContent = Math.abs(kmh).toFixed(0);
  document.getElementById('rpm').textContent = hud.rpm.toFixed(0);
  document.getElementById('gear').textContent = labelOf(hud.gear, vc.gear);
}

// The followed vehicle's speed, rpm and gear (hud.js); its gear as R, N, 1-5.
vc.hud = () => hudFigures(vc.state, vc.world.vehicles, vc.target);
vc.gearLabel = () => labelOf(vc.hud().gear, vc.gear);

function drawDashboard() {
  const c = document.getElementById('dashboard'), g = c.getContext('2d');
  const now = performance.now() / 1000;
  while (history.length && history[0][0] < now - HISTORY_S) history.shift();
  const plots = [
    ['speed km/h', [[1, '#4fc3f7']], 0, 200, 0],
    ['rpm', [[2, '#ffb74d']], 0, 8000, 0],
    ['throttle / brake', [[3, '#81c784'], [4, '#e57373']], 0, 1, 2],
  ];
  // the vehicle's EngineStatus: real-time factor always, reply latency with a coupling
  if (vc.state.rtf !== null && vc.state.rtf !== undefined) {
    plots.push(['real-time factor', [[5, '#ce93d8']], 0, 2, 3]);
  }
  if (vc.state.connected) plots.push(['reply latency ms', [[6, '#fff176']], 0, 20, 2]);
  vc.plots = plots.map((p) => p[0]);
  const height = Math.max(240, 56 * plots.length);
  if (c.height !== height) c.height = height;
  g.clearRect(0, 0, c.width, c.height);
  const h = c.height / plots.length;
  plots.forEach(([label, series, lo, hi, digits], n) => {
    const top = n * h;
    g.strokeStyle = 'rgba(255,255,255,0.25)'; g.strokeRect(4, top + 4, c.width - 8, h - 8);
    g.fillStyle = '#fff'; g.font = '11px sans-serif'; g.textAlign = 'left';
    const last = history.length ? history[history.length - 1] : null;
    const value = last ? series.map(([k]) => (Number.isFinite(last[k])
      ? last[k].toFixed(digits) : '–')).join(' / ') : '';
    g.fillText(`${label}  ${value}`, 8, top + 16);
    for (const [k, colour] of series) {
      g.strokeStyle = colour; g.beginPath();
      let pen = false;  // lifted over unknown values (NaN)
      history.forEach((row) => {
        if (!Number.isFinite(row[k])) { pen = false; return; }
        const x = 4 + (c.width - 8) * (1 - (now - row[0]) / HISTORY_S);
        const y = top + h - 6 - (h - 24) * Math.max(0, Math.min(1, (row[k] - lo) / (hi - lo)));
        if (pen) g.lineTo(x, y); else g.moveTo(x, y);
        pen = true;
      });
      g.stroke();
    }
  });
}

function resize() {
  const w = window.innerWidth, h = window.innerHeight;
  renderer.setSize(w, h, false);
  mainCam.aspect = w / h; mainCam.updateProjectionMatrix();
}
window.addEventListener('resize', resize);

let lastFrame = performance.now();
function frame() {
  requestAnimationFrame(frame);
  const now = performance.now(), dt = Math.min(0.1, (now - lastFrame) / 1000);
  lastFrame = now;
  vc.drawn = (vc.drawn || 0) + 1;
  if (!carParts) return;
  updateCar(dt);
  placeOthers();
  updateCameras();
  const w = window.innerWidth, h = window.innerHeight;
  renderer.setViewport(0, 0, w, h); renderer.setScissorTest(false);
  renderer.clear();
  renderer.render(scene, mainCam);
  const mw = Math.round(w * 0.3), mh = Math.round(mw / 3);  // rear-view mirror inset
  if (mirrorTarget.width !== mw || mirrorTarget.height !== mh) mirrorTarget.setSize(mw, mh);
  renderer.setRenderTarget(mirrorTarget);
  renderer.clear();
  renderer.render(scene, mirrorCam);
  renderer.setRenderTarget(null);
  renderer.setScissorTest(true);
  renderer.setScissor((w - mw) / 2, h - mh - 10, mw, mh);
  renderer.setViewport((w - mw) / 2, h - mh - 10, mw, mh);
  renderer.render(mirrorScene, mirrorQuadCam);  // flipped left-to-right
  renderer.setScissorTest(false);
  drawGauge();
  drawDashboard();
}

async function start() {
  const [config, terrain, road] = await Promise.all(
    ['config.json', 'terrain.json', 'road.json'].map((f) => fetch(f).then((r) => r.json())));
  vc.geometry = config.geometry; vc.sendGroundEnabled = config.send_ground;
  vc.terrain = terrain;
  scene.add(terrainMesh(terrain));
  if (road) {  // an OpenDRIVE road: its lanes and marks over the ground
    vc.road = roadGroup(road);
    scene.add(vc.road);
  }
  carParts = makeCar(vc.geometry);
  scene.add(carParts.car);
  resize();
  connect();
  setInterval(controlTick, 1000 / INPUT_HZ);
  vc.ready = true;
  frame();
}
start();
