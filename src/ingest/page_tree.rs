//! The tree html5ever's tree builder builds for text extraction: the same
//! shape as scraper's document tree (the same ego_tree operations, in the
//! same order), but only what [`super::html::extract`] reads.
//!
//! scraper's sink keeps every attribute (parsed into classes and ids),
//! joins text in tendrils and knows nothing of depth, which needed a map
//! from node to depth beside it. Here an element keeps its name and the
//! [`Role`] its text gets, a text node a `String`, and every node its depth
//! (the document node is depth 0, `<html>` 1, `<body>` 2), so the nesting
//! bound of [`super::html`] is checked as nodes are placed.

use ego_tree::{NodeId, NodeMut, Tree};
use html5ever::tendril::StrTendril;
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{expanded_name, local_name, ns, Attribute, QualName};
use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};

/// What an element's content is to the visible text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Role {
    /// `<title>`: its text is the page's title.
    pub title: bool,
    /// Not visible (`head`, `script`, `style`, ...): its content is skipped.
    pub skipped: bool,
    /// Block-level: a line ends before and after it.
    pub block: bool,
    /// `<pre>`: its newlines end lines.
    pub pre: bool,
}

impl Role {
    /// The role of the element with local name `name` (namespaces are not
    /// told apart: an SVG `<title>` is a title too, as it was with scraper's
    /// `Element::name`).
    fn of(name: &str) -> Role {
        Role { title: name == "title", skipped: is_skipped(name), block: is_block(name), pre: name == "pre" }
    }
}

/// A node of the page.
pub enum Part {
    /// The document node, the root.
    Document,
    /// An element: its name (for the tree builder) and its role.
    Element(QualName, Role),
    /// Text, adjacent text already joined: the tokenizer's tendril, which
    /// shares the buffer of the page's chunk rather than copying it.
    Text(StrTendril),
    /// A comment, doctype, processing instruction or template contents.
    Other,
}

/// A node and its depth in the tree when it was last placed.
pub struct PageNode {
    /// What the node is.
    pub part: Part,
    depth: u32,
}

impl PageNode {
    fn new(part: Part) -> Self {
        PageNode { part, depth: 0 }
    }
}

/// What the page's `<head>` says about the page itself, read as elements
/// are created: the URL it declares canonical and whether it redirects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// `href` of the first `<link rel="canonical">`, as written.
    pub canonical: Option<String>,
    /// A `<meta http-equiv="refresh">` is present: the page sends the
    /// reader elsewhere (a redirect stub when it has little text).
    pub refresh: bool,
}

impl PageLinks {
    /// Notes what element `name` with `attrs` says about the page.
    pub(super) fn note(&mut self, name: &str, attrs: &[Attribute]) {
        let attr =
            |wanted: &str| attrs.iter().find(|a| str::eq_ignore_ascii_case(&a.name.local, wanted)).map(|a| &a.value);
        match name {
            "link" if self.canonical.is_none() => {
                let is_canonical = attr("rel")
                    .is_some_and(|rel| rel.split_ascii_whitespace().any(|r| r.eq_ignore_ascii_case("canonical")));
                if is_canonical {
                    self.canonical = attr("href").map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
                }
            }
            "meta" => {
                self.refresh |= attr("http-equiv").is_some_and(|v| v.trim().eq_ignore_ascii_case("refresh"));
            }
            _ => {}
        }
    }
}

/// html5ever's tree sink building a [`Tree`] of [`PageNode`]s and
/// measuring the deepest node placed. Parse errors are not kept: a hostile
/// page has one per tag.
pub struct PageTree {
    tree: RefCell<Tree<PageNode>>,
    deepest: Cell<u32>,
    links: RefCell<PageLinks>,
}

impl PageTree {
    /// An empty document.
    pub fn new() -> Self {
        PageTree {
            tree: RefCell::new(Tree::new(PageNode::new(Part::Document))),
            deepest: Cell::new(0),
            links: RefCell::new(PageLinks::default()),
        }
    }

    /// The depth of the deepest node placed so far.
    pub fn deepest(&self) -> u32 {
        self.deepest.get()
    }

    fn depth_of(&self, node: NodeId) -> u32 {
        self.tree.borrow().get(node).map_or(0, |n| n.value().depth)
    }

    /// Records that `child`, if a node, is placed at `depth`.
    fn placed(&self, child: &NodeOrText<NodeId>, depth: u32) {
        if let NodeOrText::AppendNode(id) = child {
            if let Some(mut node) = self.tree.borrow_mut().get_mut(*id) {
                node.value().depth = depth;
            }
            self.deepest.set(self.deepest.get().max(depth));
        }
    }
}

/// Appends `text` to the text node `node` if it is one; false if not.
fn join_text(node: Option<NodeMut<'_, PageNode>>, text: &StrTendril) -> bool {
    match node {
        Some(mut node) => match &mut node.value().part {
            Part::Text(t) => {
                t.push_tendril(text);
                true
            }
            _ => false,
        },
        None => false,
    }
}

/// A node id the tree builder handed over: it is in the tree by contract.
const HANDLE: &str = "html5ever passes handles this sink made";

impl TreeSink for PageTree {
    type Output = (Tree<PageNode>, u32, PageLinks);
    type Handle = NodeId;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> (Tree<PageNode>, u32, PageLinks) {
        (self.tree.into_inner(), self.deepest.get(), self.links.into_inner())
    }
    fn parse_error(&self, _msg: Cow<'static, str>) {}
    fn set_quirks_mode(&self, _mode: QuirksMode) {}
    fn get_document(&self) -> NodeId {
        self.tree.borrow().root().id()
    }
    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        x == y
    }
    fn elem_name<'a>(&'a self, target: &'a NodeId) -> Ref<'a, QualName> {
        Ref::map(self.tree.borrow(), |tree| match &tree.get(*target).expect(HANDLE).value().part {
            Part::Element(name, _) => name,
            _ => panic!("html5ever asks element names of elements only"),
        })
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _flags: ElementFlags) -> NodeId {
        self.links.borrow_mut().note(&name.local, &attrs);
        let template = name.expanded() == expanded_name!(html "template");
        let role = Role::of(&name.local);
        let mut tree = self.tree.borrow_mut();
        let mut node = tree.orphan(PageNode::new(Part::Element(name, role)));
        if template {
            // The template contents, as its first child (as scraper keeps them).
            node.append(PageNode::new(Part::Other));
        }
        node.id()
    }
    fn create_comment(&self, _text: StrTendril) -> NodeId {
        self.tree.borrow_mut().orphan(PageNode::new(Part::Other)).id()
    }
    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> NodeId {
        self.tree.borrow_mut().orphan(PageNode::new(Part::Other)).id()
    }
    fn append_doctype_to_document(&self, _name: StrTendril, _public_id: StrTendril, _system_id: StrTendril) {
        self.tree.borrow_mut().root_mut().append(PageNode::new(Part::Other));
    }
    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        self.placed(&child, self.depth_of(*parent) + 1);
        let mut tree = self.tree.borrow_mut();
        let mut parent = tree.get_mut(*parent).expect(HANDLE);
        match child {
            NodeOrText::AppendNode(id) => {
                parent.append_id(id);
            }
            NodeOrText::AppendText(text) => {
                if !join_text(parent.last_child(), &text) {
                    parent.append(PageNode::new(Part::Text(text)));
                }
            }
        }
    }
    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        self.placed(&new_node, self.depth_of(*sibling));
        let mut tree = self.tree.borrow_mut();
        if let NodeOrText::AppendNode(id) = new_node {
            tree.get_mut(id).expect(HANDLE).detach();
        }
        let mut sibling = tree.get_mut(*sibling).expect(HANDLE);
        if sibling.parent().is_none() {
            return;
        }
        match new_node {
            NodeOrText::AppendNode(id) => {
                sibling.insert_id_before(id);
            }
            NodeOrText::AppendText(text) => {
                if !join_text(sibling.prev_sibling(), &text) {
                    sibling.insert_before(PageNode::new(Part::Text(text)));
                }
            }
        }
    }
    fn append_based_on_parent_node(&self, element: &NodeId, prev_element: &NodeId, child: NodeOrText<NodeId>) {
        let has_parent = self.tree.borrow().get(*element).is_some_and(|n| n.parent().is_some());
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }
    fn mark_script_already_started(&self, _node: &NodeId) {}
    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        let depth = self.depth_of(*target);
        let mut tree = self.tree.borrow_mut();
        let mut template = tree.get_mut(*target).expect(HANDLE);
        let mut contents = template.first_child().expect("a template element is made with its contents");
        contents.value().depth = depth;
        contents.id()
    }
    fn add_attrs_if_missing(&self, _target: &NodeId, _attrs: Vec<Attribute>) {}
    fn remove_from_parent(&self, target: &NodeId) {
        self.tree.borrow_mut().get_mut(*target).expect(HANDLE).detach();
    }
    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        self.tree.borrow_mut().get_mut(*new_parent).expect(HANDLE).reparent_from_id_append(*node);
    }
}

/// Elements whose content is not visible text.
fn is_skipped(name: &str) -> bool {
    matches!(name, "head" | "script" | "style" | "noscript" | "template" | "title" | "iframe")
}

/// Elements that end a line (before and after them).
pub(super) fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "br"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "frameset"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "option"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}
