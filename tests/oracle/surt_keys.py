"""Prints, as JSON lines {"url": ..., "key": ...}, the SURT key the `surt` package gives (as
cdxj-indexer calls it: the URL itself where surt raises) for every URL of the corpus files named
on the command line (read with warcio) and for generated URLs that exercise each rule."""
import json
import random
import sys

import surt
from warcio.archiveiterator import ArchiveIterator


def key(url):
    try:
        return surt.surt(url)
    except Exception:
        return url


def corpus_urls(paths):
    for path in paths:
        with open(path, "rb") as f:
            try:
                for rec in ArchiveIterator(f, arc2warc=False):
                    h = rec.rec_headers
                    url = h.get_header("WARC-Target-URI") or h.get_header("uri")
                    if url:
                        yield url
            except Exception:
                pass  # a damaged file: the URLs before the damage are kept


PIECES = {
    "scheme": ["http://", "https://", "HTTP://", "ftp://", "", "http://https://", "http:////",
               "dns:", "mailto:", "http:/", "whois://"],
    "user": ["", "", "", "user@", "u:p@", "@"],
    "host": ["www.example.com", "WWW12.Example.COM", "example.com.", "..example..com..",
             "b\u00fccher.ch", "\u2603.com", "xn--n3h.com", "3279880203", "39024579298",
             "10.0.258", "017.0.0.1", "1.2.3.256", "08.1.1.1", "0x7f.0.0.1", "127.0.0.1",
             "%77%77%77.example.com", "host%23.com", " space.com", "[::1]", "[fe80::1%eth0]",
             "\u0001\u0080.com", "ex\u00e4mple.\u0645\u062b\u0627\u0644", "a" * 64 + ".com",
             "www.\u0645\u062b\u0627\u0644.com", "\u00df.de", "stra\u00dfe.\uff41\uff42.com",
             "", "www2foo.com", "www.", "EXAMPLE.com%2e"],
    "port": ["", "", ":80", ":443", ":8080", ":", "::", ":0", ":65536", ":x1", ":0080"],
    "path": ["", "/", "/a/b/", "/A/./B/../C", "/../x", "//two//slashes/", "/%41%2541%252541",
             "/%zz%", "/sp ace", "/\u00e9t\u00e9", "/(S(4hqa0555fwsecu455xqckv45))/m.aspx",
             "/(4hqa0555fwsecu455xqckv45)/m.aspx", "/index.html;jsessionid=x", "/a#b/c",
             "/trail/", "/x\t\r\ny", "/%2F%2f"],
    "query": ["", "?", "?b=2&a=1", "?B=1&b=&b", "?a=1&", "?&&",
              "?jsessionid=0123456789ABCDEF0123456789abcdef&z=1",
              "?x=1&phpsessid=0123456789abcdef0123456789abcdef",
              "?sid=0123456789abcdef0123456789abcdef",
              "?ASPSESSIONIDABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX&k=v",
              "?cfid=1&cftoken=2&q=3", "?q=%41%2B+%20", "?\u00e9=\u00e8", "?a=b?c"],
    "fragment": ["", "", "#frag", "#a#b", "#"],
}


def generated(n, seed=29):
    rnd = random.Random(seed)
    for _ in range(n):
        parts = [rnd.choice(PIECES[k]) for k in
                 ("scheme", "user", "host", "port", "path", "query", "fragment")]
        url = "".join(parts)
        if rnd.random() < 0.1:
            url = "  " + url + " \n"
        yield url


def main():
    out = sys.stdout
    for url in list(corpus_urls(sys.argv[1:])) + list(generated(20000)):
        out.write(json.dumps({"url": url, "key": key(url)}) + "\n")


if __name__ == "__main__":
    main()
