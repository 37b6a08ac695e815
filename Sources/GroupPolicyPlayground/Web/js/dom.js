// The page's elements, and new ones made safely: text always goes in as text, never as markup.

/** The element of an id. */
export function $(id) {
  return document.getElementById(id);
}

/** A new element with a class and text content. */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Shows a line in the header's status. */
export function setStatus(text) {
  $("status").textContent = text;
}
