// An OpenDRIVE road: its lanes and painted marks, as triangle strips cut by the server
// (vcosim.modules.viewer.road) from the geometry the wheels drive on. Each strip is a flat
// list of cross sections, left point then right point, x y z each.
import * as THREE from './vendor/three.module.js';

// Above the ground grid, which follows the road surface within millimetres; the polygon
// offset settles the rest, so neither lanes nor paint flicker through the ground.
const LIFT = { lane: 0.02, mark: 0.03 };
const LANE_COLOURS = {
  driving: 0x4a4a4e, sidewalk: 0x9a9a96, walking: 0x9a9a96, biking: 0x8a4a40,
  parking: 0x5a5a60, shoulder: 0x6a6a66, border: 0x6a6a66, curb: 0x9a9a96,
};
const OTHER_LANE = 0x5e5e62;
const PAINT = {
  standard: 0xffffff, white: 0xffffff, yellow: 0xf2c230, blue: 0x2f6fd0, green: 0x2f9e4f,
  red: 0xd03030, orange: 0xf08a24, black: 0x111111, violet: 0x8a4fd0,
};

function addStrip(flat, lift, positions, index) {
  const first = positions.length / 3, sections = flat.length / 6;
  for (let k = 0; k < flat.length; k += 3) positions.push(flat[k], flat[k + 1], flat[k + 2] + lift);
  for (let i = 0; i < sections - 1; i++) {
    const a = first + 2 * i;  // left, right; the next section's left, right: a+2, a+3
    index.push(a, a + 1, a + 3, a, a + 3, a + 2);
  }
}

function stripsMesh(strips, lift, material) {
  const positions = [], index = [];
  for (const flat of strips) addStrip(flat, lift, positions, index);
  const geo = new THREE.BufferGeometry();
  geo.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  geo.setIndex(index);
  geo.computeVertexNormals();
  return new THREE.Mesh(geo, material);
}

// The road as a group: one mesh per lane (lit by the scene) and one per mark (paint, unlit,
// so a mark shows its own colour); counts of both for tests.
export function roadGroup(road) {
  const group = new THREE.Group();
  const surfaces = new Map(), paints = new Map();
  const surface = (type) => {
    if (!surfaces.has(type)) {
      surfaces.set(type, new THREE.MeshLambertMaterial({
        color: LANE_COLOURS[type] ?? OTHER_LANE, side: THREE.DoubleSide,
        polygonOffset: true, polygonOffsetFactor: -1, polygonOffsetUnits: -1 }));
    }
    return surfaces.get(type);
  };
  const paint = (colour) => {
    if (!paints.has(colour)) {
      paints.set(colour, new THREE.MeshBasicMaterial({
        color: PAINT[colour] ?? PAINT.standard, side: THREE.DoubleSide,
        polygonOffset: true, polygonOffsetFactor: -2, polygonOffsetUnits: -2 }));
    }
    return paints.get(colour);
  };
  for (const lane of road.lanes) group.add(stripsMesh([lane.strip], LIFT.lane, surface(lane.type)));
  let dashes = 0;
  for (const mark of road.marks) {
    group.add(stripsMesh(mark.strips, LIFT.mark, paint(mark.color)));
    dashes += mark.strips.length;
  }
  group.userData = { lanes: road.lanes.length, marks: road.marks.length, dashes };
  return group;
}
