// @ts-check
/** Building the page: elements from a tag, properties and children, and the few shapes every page uses. */

/**
 * What `h` sets on an element: `on…` members are event listeners (whose event's `currentTarget` is the
 * element), `class` its class name, a member the element has is set as a property, anything else as an
 * attribute (`true` as an empty one); `undefined` and `false` are left out.
 * @template {Element} E
 * @typedef {{ [K in keyof HTMLElementEventMap as `on${K}`]?:
 *   (event: HTMLElementEventMap[K] & { currentTarget: E }) => unknown } & { [name: string]: unknown }} Props
 */
/** @typedef {Node | string | number | boolean | null | undefined} Leaf */
/**
 * A child of an element; `undefined`, `null` and `false` add nothing, and lists (three deep at most) are
 * flattened.
 * @typedef {Leaf | readonly (Leaf | readonly (Leaf | readonly Leaf[])[])[]} Child
 */

/**
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Props<HTMLElementTagNameMap[Tag]>} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[Tag]}
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith('on')) element.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (key === 'class') element.className = String(value);
    else if (key in element && key !== 'list') Object.assign(element, { [key]: value });
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const SVG = 'http://www.w3.org/2000/svg';
/**
 * @template {keyof SVGElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...(Node | string)} children
 * @returns {SVGElementTagNameMap[Tag]}
 */
export function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  for (const child of children) element.append(child);
  return element;
}

/**
 * The element of the console's page (index.html) with this id.
 * @param {string} id
 */
export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The console's page has no #${id}.`);
  return element;
}

/**
 * @param {string} labelText
 * @param {HTMLElement} input
 */
export function field(labelText, input) {
  return h('label', {}, labelText, input);
}

/**
 * A yes/no question in place of a destructive button; `yes` and `no` are [text, accessible name].
 * @param {string} question
 * @param {[string, string]} yes
 * @param {[string, string]} no
 * @param {() => unknown} onYes
 * @param {() => unknown} onNo
 */
export function confirmation(question, yes, no, onYes, onNo) {
  return h(
    'span',
    { class: 'confirm' },
    question,
    ' ',
    h('button', { type: 'button', class: 'danger', 'aria-label': yes[1], onclick: onYes }, yes[0]),
    h('button', { type: 'button', class: 'secondary', 'aria-label': no[1], onclick: onNo }, no[0]),
  );
}
