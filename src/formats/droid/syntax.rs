//! DROID's byte-sequence syntax, parsed into a [`Pat`]: hex bytes, `??` any byte, `[xx:yy]` a
//! range (`['a'-'z']` of text), `[!xx]` / `[!xx:yy]` / `[!xxyy..]` negations, `[&xx]` / `[~xx]` bit masks (all / any
//! of the mask's bits set), `'text'` an ASCII literal, `(aa|bb)` alternatives, `{n}` / `{n-m}`
//! / `{n-*}` gaps and `*` an unbounded gap.

use memchr::memmem;

/// A set of byte values, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ByteSet([u64; 4]);

impl ByteSet {
    pub(crate) const ALL: ByteSet = ByteSet([u64::MAX; 4]);

    pub(crate) fn empty() -> Self {
        ByteSet([0; 4])
    }

    pub(crate) fn range(lo: u8, hi: u8) -> Self {
        let mut s = ByteSet::empty();
        for b in lo.min(hi)..=lo.max(hi) {
            s.insert(b);
        }
        s
    }

    /// Every byte whose bits include all of `mask`'s (`all`) or any of them (`!all`).
    pub(crate) fn mask(mask: u8, all: bool) -> Self {
        let mut s = ByteSet::empty();
        for b in 0..=255u8 {
            if (all && b & mask == mask) || (!all && b & mask != 0) {
                s.insert(b);
            }
        }
        s
    }

    pub(crate) fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    #[inline]
    pub(crate) fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    pub(crate) fn negate(self) -> Self {
        ByteSet(self.0.map(|w| !w))
    }

    pub(crate) fn union(self, other: ByteSet) -> Self {
        let mut out = self;
        for (o, w) in out.0.iter_mut().zip(other.0) {
            *o |= w;
        }
        out
    }

    pub(crate) fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The members, when there are one to three (what memchr can look for).
    pub(crate) fn few(&self) -> Option<Vec<u8>> {
        if self.len() > 3 || self.len() == 0 {
            return None;
        }
        Some((0..=255u8).filter(|b| self.contains(*b)).collect())
    }
}

/// A run of fixed bytes, with the searchers that find it either way, built when first needed:
/// most literals are only compared at a fixed place, and building every searcher up front was
/// most of the signature file's compile time (the start-up of every `package` call). Boxed:
/// a searcher held inline is about 350 bytes, and most literals never get one, so inline
/// searchers were most of the compiled signatures' memory.
#[derive(Debug, Clone)]
pub(crate) struct Lit {
    pub(crate) bytes: Vec<u8>,
    fwd: std::sync::OnceLock<Box<memmem::Finder<'static>>>,
    rev: std::sync::OnceLock<Box<memmem::FinderRev<'static>>>,
}

impl Lit {
    pub(crate) fn new(bytes: Vec<u8>) -> Self {
        Lit { bytes, fwd: Default::default(), rev: Default::default() }
    }

    /// Finds `bytes` in a forward haystack.
    pub(crate) fn fwd(&self) -> &memmem::Finder<'static> {
        self.fwd.get_or_init(|| Box::new(memmem::Finder::new(&self.bytes).into_owned()))
    }

    /// Finds `bytes` read backwards (a reversed haystack is searched from its real end).
    pub(crate) fn rev(&self) -> &memmem::FinderRev<'static> {
        self.rev.get_or_init(|| {
            let reversed: Vec<u8> = self.bytes.iter().rev().copied().collect();
            Box::new(memmem::FinderRev::new(&reversed).into_owned())
        })
    }
}

/// One element of a pattern.
#[derive(Debug, Clone)]
pub(crate) enum Elem {
    Lit(Box<Lit>),
    /// One byte from the set.
    Set(ByteSet),
    /// As many bytes as `lo` (and `hi`), compared as a big-endian number: within
    /// `lo..=hi`, or outside it when `negate` (`[!xxyy]` is `lo == hi`, negated).
    /// `backwards`: the pattern is matched from the end, so the bytes come last first.
    Range {
        lo: Vec<u8>,
        hi: Vec<u8>,
        negate: bool,
        backwards: bool,
    },
    /// One of several patterns.
    Alt(Vec<Pat>),
    /// Between `min` and `max` bytes of anything (`None`: no upper bound).
    Gap {
        min: usize,
        max: Option<usize>,
    },
}

/// A byte pattern: elements matched one after the other.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pat(pub(crate) Vec<Elem>);

impl Pat {
    /// Appends an element, merging runs of literals and of gaps.
    pub(crate) fn push(&mut self, e: Elem) {
        match (self.0.last_mut(), e) {
            (Some(Elem::Lit(a)), Elem::Lit(b)) => {
                let mut bytes = std::mem::take(&mut a.bytes);
                bytes.extend_from_slice(&b.bytes);
                **a = Lit::new(bytes);
            }
            (Some(Elem::Gap { min, max }), Elem::Gap { min: m2, max: x2 }) => {
                *min += m2;
                *max = match (*max, x2) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
            (_, Elem::Gap { min: 0, max: Some(0) }) => {}
            (_, e) => self.0.push(e),
        }
    }

    pub(crate) fn extend(&mut self, other: Pat) {
        for e in other.0 {
            self.push(e);
        }
    }

    /// The same pattern read from its end to its start (for matching back from a file's end).
    pub(crate) fn reversed(&self) -> Pat {
        let mut out = Pat::default();
        for e in self.0.iter().rev() {
            out.push(match e {
                Elem::Lit(l) => {
                    Elem::Lit(Box::new(Lit::new(l.bytes.iter().rev().copied().collect())))
                }
                Elem::Range { lo, hi, negate, backwards } => Elem::Range {
                    lo: lo.clone(),
                    hi: hi.clone(),
                    negate: *negate,
                    backwards: !backwards,
                },
                Elem::Alt(ps) => Elem::Alt(ps.iter().map(Pat::reversed).collect()),
                other => other.clone(),
            });
        }
        out
    }

    /// The longest span the pattern can cover (`None`: unbounded).
    pub(crate) fn max_len(&self) -> Option<usize> {
        self.0.iter().try_fold(0usize, |acc, e| {
            let n = match e {
                Elem::Lit(l) => l.bytes.len(),
                Elem::Set(_) => 1,
                Elem::Range { lo, .. } => lo.len(),
                Elem::Alt(ps) => ps.iter().map(Pat::max_len).try_fold(0, |m, l| Some(m.max(l?)))?,
                Elem::Gap { max, .. } => (*max)?,
            };
            Some(acc + n)
        })
    }
}

/// Why a byte sequence cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    /// A character that has no place there (the character, its index).
    #[error("unexpected `{0}` at {1}")]
    Unexpected(char, usize),
    /// A hex byte cut in half (where it starts).
    #[error("odd number of hex digits at {0}")]
    OddHex(usize),
    /// A bracket, brace or quote never closed.
    #[error("unclosed `{0}`")]
    Unclosed(char),
    /// A gap whose bounds are not numbers, or whose maximum is below its minimum.
    #[error("bad number in a gap at {0}")]
    BadGap(usize),
    /// Nothing to match.
    #[error("empty sequence")]
    Empty,
}

/// Parses DROID's syntax into a pattern.
pub(crate) fn parse(text: &str) -> Result<Pat, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { chars, at: 0 };
    let pat = p.sequence()?;
    if let Some(c) = p.peek() {
        return Err(SyntaxError::Unexpected(c, p.at));
    }
    if pat.0.is_empty() {
        return Err(SyntaxError::Empty);
    }
    Ok(pat)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn expect(&mut self, c: char, open: char) -> Result<(), SyntaxError> {
        match self.peek() {
            Some(x) if x == c => {
                self.at += 1;
                Ok(())
            }
            Some(x) => Err(SyntaxError::Unexpected(x, self.at)),
            None => Err(SyntaxError::Unclosed(open)),
        }
    }

    /// Elements up to the end, a `|` or a `)`.
    fn sequence(&mut self) -> Result<Pat, SyntaxError> {
        let mut pat = Pat::default();
        while let Some(c) = self.peek() {
            let e = match c {
                '|' | ')' => break,
                c if c.is_whitespace() => {
                    self.at += 1;
                    continue;
                }
                '?' => {
                    self.at += 1;
                    self.expect('?', '?')?;
                    Elem::Set(ByteSet::ALL)
                }
                '*' => {
                    self.at += 1;
                    Elem::Gap { min: 0, max: None }
                }
                '{' => self.gap()?,
                '[' => self.bracket()?,
                '(' => self.alternatives()?,
                '\'' => self.text()?,
                _ => Elem::Lit(Box::new(Lit::new(vec![self.hex_byte()?]))),
            };
            pat.push(e);
        }
        Ok(pat)
    }

    fn hex_byte(&mut self) -> Result<u8, SyntaxError> {
        let start = self.at;
        let digit = |p: &mut Parser| -> Result<u8, SyntaxError> {
            match p.peek() {
                Some(c) if c.is_ascii_hexdigit() => {
                    p.at += 1;
                    // to_digit(16) of an ASCII hex digit is below 16.
                    Ok(c.to_digit(16).map_or(0, |d| d as u8))
                }
                Some(_) if p.at > start => Err(SyntaxError::OddHex(start)),
                Some(c) => Err(SyntaxError::Unexpected(c, p.at)),
                None => Err(SyntaxError::OddHex(start)),
            }
        };
        let hi = digit(self)?;
        let lo = digit(self)?;
        Ok(hi << 4 | lo)
    }

    /// One or more hex bytes.
    fn hex_run(&mut self) -> Result<Vec<u8>, SyntaxError> {
        let mut run = vec![self.hex_byte()?];
        while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            run.push(self.hex_byte()?);
        }
        Ok(run)
    }

    fn number(&mut self) -> Result<usize, SyntaxError> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let s: String = self.chars[start..self.at].iter().collect();
        s.parse().map_err(|_| SyntaxError::BadGap(start))
    }

    /// `{n}`, `{n-m}`, `{n-*}`.
    fn gap(&mut self) -> Result<Elem, SyntaxError> {
        self.at += 1;
        let min = self.number()?;
        let max = if self.peek() == Some('-') {
            self.at += 1;
            if self.peek() == Some('*') {
                self.at += 1;
                None
            } else {
                Some(self.number()?)
            }
        } else {
            Some(min)
        };
        self.expect('}', '{')?;
        if max.is_some_and(|m| m < min) {
            return Err(SyntaxError::BadGap(self.at));
        }
        Ok(Elem::Gap { min, max })
    }

    /// `[xx:yy]`, `[!...]`, `[&xx]`, `[~xx]`, `[xxyy...]`.
    fn bracket(&mut self) -> Result<Elem, SyntaxError> {
        self.at += 1;
        let negate = self.peek() == Some('!');
        if negate {
            self.at += 1;
        }
        let set = match self.peek() {
            Some('&') | Some('~') => {
                let all = self.peek() == Some('&');
                self.at += 1;
                ByteSet::mask(self.hex_byte()?, all)
            }
            _ => {
                let lo = self.range_end()?;
                // The container signature file writes ranges of text as `['6'-'7']`.
                let hi = if matches!(self.peek(), Some(':') | Some('-')) {
                    self.at += 1;
                    self.range_end()?
                } else {
                    lo.clone()
                };
                if lo.len() != hi.len() {
                    return Err(SyntaxError::Unexpected(':', self.at));
                }
                if lo.len() > 1 {
                    self.expect(']', '[')?;
                    if !negate && lo == hi {
                        return Ok(Elem::Lit(Box::new(Lit::new(lo))));
                    }
                    return Ok(Elem::Range { lo, hi, negate, backwards: false });
                }
                ByteSet::range(lo[0], hi[0])
            }
        };
        self.expect(']', '[')?;
        Ok(Elem::Set(if negate { set.negate() } else { set }))
    }

    /// One end of a range: hex bytes or quoted text.
    fn range_end(&mut self) -> Result<Vec<u8>, SyntaxError> {
        match self.peek() {
            Some('\'') => match self.text()? {
                Elem::Lit(l) if !l.bytes.is_empty() => Ok(l.bytes.clone()),
                _ => Err(SyntaxError::Empty),
            },
            _ => self.hex_run(),
        }
    }

    fn alternatives(&mut self) -> Result<Elem, SyntaxError> {
        self.at += 1;
        let mut alts = vec![self.sequence()?];
        while self.peek() == Some('|') {
            self.at += 1;
            alts.push(self.sequence()?);
        }
        self.expect(')', '(')?;
        Ok(Elem::Alt(alts))
    }

    fn text(&mut self) -> Result<Elem, SyntaxError> {
        self.at += 1;
        let start = self.at;
        while self.peek().is_some_and(|c| c != '\'') {
            self.at += 1;
        }
        let s: String = self.chars[start..self.at].iter().collect();
        self.expect('\'', '\'')?;
        Ok(Elem::Lit(Box::new(Lit::new(s.into_bytes()))))
    }
}
