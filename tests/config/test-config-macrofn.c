/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-macrofn.c — HTCondor's macro functions (config/macrofn.c):
 * the examples of its manual (introduction-to-configuration.rst, "Function
 * Macros in Configuration", and submitting-a-job.rst) and of its own tests
 * (src/condor_utils/test_macro_expand.cpp), printf formats and the hostile
 * ones, negative $SUBSTR indices, the filename letters, random draws under
 * a seed (in range, every value reached, fixed when a line is read), the
 * errors with file and line, the $(1?) metaknob forms kept as text, the
 * bounds, HTCondor's shipped files that use the functions, and the submit
 * language (per job draws, $Ff against the submit directory, $CHOICE over
 * queue items).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config-internal.h"
#include "submit-test.h"
#include "test-util.h"

/* What the expansion cases see: HTCondor's test table, and the manual's. */
static const char fixture[] =
        "FOO = bar\n"
        "X = 2\n"
        "Y = 6\n"
        "XYArea = $(X) * $(Y)\n"
        "VANILLA = 5\n"
        "STANDARD = 1\n"
        "VM = 13\n"
        "HalfVanilla = $(VANILLA)/2.0\n"
        "DoubleVanilla = $(VANILLA)*2\n"
        "StandardMinusVM = $(STANDARD)-$(VM)\n"
        "BackgroundLoad = 0.3\n"
        "Name = abcdef\n"
        "Items5 = aa bb cc dd ee\n"
        "Items5Quoted = \"aa bb cc dd ee\"\n"
        "Items6 = strcat($(Items5Quoted),\" ff\")\n"
        "List6c = aa,bb, cc,dd,ee,ff\n"
        "List6cq = $Fq(list6c)\n"
        "Version = \"$Version: 8.5.6 May 20 2016 998822 $\"\n"
        "VerNum = split($(Version))[1]\n"
        "FullVerNum = strcat(split($(Version))[1],\".\",split($(Version))[5])\n"
        "SplitVer = split($(Version))\n"
        "CHOCOLATE = $(VANILLA)-2\n"
        "FULL_HOSTNAME = host.DOMAIN\n"
        "LCFullHostname = toLower(\"$(FULL_HOSTNAME)\")\n"
        "slist = \"a,B,c\"\n"
        "lcslist = tolower($(slist))\n"
        "list = split($(slist))\n"
        "clist = size($(list)) * 10\n"
        "semilist = join(\";\",split($(lcslist)))\n"
        "MyIndex = 0 + 1\n"
        "fileBase = base\n"
        "fileExt = ex\n"
        "fileDirs = /dur/der\n"
        "fileSimple = simple.dat\n"
        "fileLong = Now is the time for all good men.\n"
        "fileCompound = $(fileDirs)/$(fileBase).$(FileExt)\n"
        "fileAbs = /one/two/three.for\n"
        "fileAbsDeep = /six/five/four/three/two/one/file.ext\n"
        "urlAbs = file:/one/two/three.for\n"
        "fileAbsQuoted = \"/one/two/three.for\"\n"
        "fileAbsSQuoted = '/one/two/three.for'\n"
        "fileRel = ein/zwei/drei.fir\n"
        "fileRelDeep = a/b/c/d/e/f.x\n"
        "fileRelSpaces = \"ein/zw ei/dr ei.fir\"\n"
        "fileCurRel = ./here\n"
        "fileUp1Rel = ../file\n"
        "fileOver1Rel = ../peer/file.dat\n"
        "fileCurRel2 = ./uno/dos.tres\n"
        "fileMultiDot = /dir/b.o.x\n"
        "fileDoubleDot = /dir/boo..ox\n"
        "fileTarGz = stuff.tar.gz\n"
        "wfileRel = ein\\zwei\\drei.fir\n"
        "wfileUp1Rel = ..\\file\n"
        "wfileCurRel = .\\here\n"
        "wUNCfileAbs = \\\\server\\share\\one\\two\\file.ext\n"
        "Empty =\n"
        "TPL = $(1?) $(0#) $(2+) $(1?:x) $(1) $(2:Default)\n";

static Config *fixture_config(void) {
        ConfigError err = {};
        Config *cfg = NULL;

        GLEAN_TEST_CHECK_FATAL(config_new_empty(&cfg) == 0, "config_new_empty failed");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, fixture, "fixture.conf", &err) == 0, "fixture: %s:%d: %s",
                               err.file, err.line, err.msg);
        return cfg;
}

typedef struct ExpandCase {
        const char *text;
        const char *value;
} ExpandCase;

static void check_expansions(const Config *cfg, const ExpandCase *cases, size_t n, const char *table) {
        for (size_t i = 0; i < n; i++) {
                ConfigError err = {};
                char *v = NULL;
                int r = config_expand(cfg, cases[i].text, &v, &err);

                GLEAN_TEST_CHECK(r == 0 && strcmp(v, cases[i].value) == 0, "%s row %zu: '%s' gave %d '%s' (%s), want '%s'",
                                 table, i, cases[i].text, r, r == 0 ? v : "", err.msg, cases[i].value);
                free(v);
        }
}

#define CHECK_EXPANSIONS(cfg, cases) check_expansions(cfg, cases, sizeof(cases) / sizeof((cases)[0]), #cases)

/* ---- the manual's examples ---- */

static void test_manual_examples(void) {
        static const ExpandCase cases[] = {
                /* $INT: "the format is everything after the comma" */
                { "$INT(XYArea)", "12" },
                { "$INT(XYArea,%04d)", "0012" },
                { "$INT(XYArea,Area=%d)", "Area=12" },
                /* $STRING */
                { "$STRING(LCFullHostname)", "host.domain" },
                { "$STRING(LCFullHostname,Name: %s)", "Name: host.domain" },
                /* $EVAL: strings without quotes, the rest as ClassAd text */
                { "$EVAL(slist)", "a,B,c" },
                { "$EVAL(lcslist)", "a,b,c" },
                { "$EVAL(list)", "{ \"a\",\"B\",\"c\" }" },
                { "$EVAL(clist)", "30" },
                { "$EVAL(semilist)", "a;b;c" },
                /* $SUBSTR, Name = abcdef */
                { "$SUBSTR(Name, 2)", "cdef" },
                { "$SUBSTR(Name, 0, -2)", "abcd" },
                { "$SUBSTR(Name, 1, 3)", "bcd" },
                { "$SUBSTR(Name, -1)", "f" },
                { "$SUBSTR(Name, 4, -3)", "" },
                /* $F */
                { "$Fn(/tmp/simulate.exe)", "simulate" },
                { "$Fx(/tmp/simulate.exe)", ".exe" },
                /* $DIRNAME = $Fp, $BASENAME = $Fnx, with a suffix to remove */
                { "$DIRNAME(fileAbs)", "/one/two/" },
                { "$BASENAME(fileAbs)", "three.for" },
                { "$BASENAME(fileTarGz, .tar.gz)", "stuff" },
                /* $CHOICE from 0, over arguments or a list macro */
                { "$CHOICE(0,AA,BB,CC,DD)", "AA" },
                { "$CHOICE(3,AA,BB,CC,DD)", "DD" },
                { "$CHOICE(2,List6c)", "cc" },
                /* the submit manual's example 1 */
                { "run-$INT(MyIndex,%04d)", "run-0001" },
                /* $ENV and $(NAME:default), as before */
                { "$(NOPE:dflt)", "dflt" },
        };
        Config *cfg = fixture_config();

        CHECK_EXPANSIONS(cfg, cases);
        config_free(cfg);
}

/* ---- HTCondor's own test vectors (test_macro_expand.cpp) ---- */

static void test_htcondor_vectors(void) {
        static const ExpandCase cases[] = {
                { "$SUBSTR(FOO,2)", "r" },
                { "$SUBSTR(FOO,1,1)", "a" },
                { "$SUBSTR(ITEMS5,-2)", "ee" },
                { "$SUBSTR(ITEMS5,2,-3)", " bb cc dd" },
                { "$SUBSTR(BAR,10)", "" },
                { "$SUBSTR(BAR,2,-3)", "" },
                { "$SUBSTR(list6c,VM)", "ee,ff" },
                { "$SUBSTR(fileCompound,-5)", "se.ex" },
                { "$SUBSTR(Name,-100,2)", "ab" },
                { "$SUBSTR(Name,100)", "" },
                { "$SUBSTR(Name,1,-100)", "" },
                { "$SUBSTR(Empty,1)", "" },
                { "$STRING(ITEMS5quoted)", "aa bb cc dd ee" },
                { "$STRING(Items6)", "aa bb cc dd ee ff" },
                { "$STRING(VerNum)", "8.5.6" },
                { "$STRING(FullVerNum)", "8.5.6.998822" },
                { "$STRING(list6cq)", "aa,bb, cc,dd,ee,ff" },
                { "$STRING(BAR)", "BAR" },
                { "$STRING(Items6,%20s)", "   aa bb cc dd ee ff" },
                { "$STRING(Items6,%-20s)", "aa bb cc dd ee ff   " },
                { "$STRING(Items6,%10.10s)", "aa bb cc d" },
                { "$INT(VANILLA)", "5" },
                { "$INT(STANDARD)", "1" },
                { "$INT(4+4)", "8" },
                { "$INT(StandardMinusVM)", "-12" },
                { "$INT(HalfVanilla)", "2" },
                { "$INT(VANILLA,%03d)", "005" },
                { "$INT(VANILLA,  %d)", "  5" },
                { "$INT(VANILLA,_%04u_)", "_0005_" },
                { "$INT(DoubleVanilla,%d)", "10" },
                { "$INT(VANILLA,%x)", "5" },
                { "$INT(true)", "1" },
                { "$REAL(4.56)", "4.56" },
                { "$REAL(4.56,%.1f)", "4.6" },
                { "$REAL(11/3.0, _%.3f_)", " _3.667_" },
                { "$REAL(vanilla)", "5" },
                { "$REAL(hALFvANILLA)", "2.5" },
                { "$REAL(standard,%2f)", "1.000000" },
                { "$REAL(BackgroundLoad)", "0.3" },
                { "$REAL(BackgroundLoad,%g)", "0.3" },
                { "$REAL(BackgroundLoad,%e)", "3.000000e-01" },
                /* a format that shows no '.' gets ".0", as HTCondor's */
                { "$REAL(VANILLA,%.0f)", "5.0" },
                { "$REAL(VANILLA,%.0f s)", "5.0 s" },
                { "$EVAL(4)", "4" },
                { "$EVAL(4+4)", "8" },
                { "$EVAL(bar)", "undefined" },
                { "$EVAL(SplitVer)", "{ \"$Version:\",\"8.5.6\",\"May\",\"20\",\"2016\",\"998822\",\"$\" }" },
                { "$EVAL(1 +)", "1 +" }, /* not an expression: the text */
                { "$CHOICE(1,AA,BB,CC,DD)", "BB" },
                { "$CHOICE(0,List6c)", "aa" },
                { "$CHOICE(5,List6c)", "ff" },
                { "$CHOICE(VANILLA,List6c)", "ff" },
                { "$CHOICE(CHOCOLATE,List6c)", "dd" },
                { "$CHOICE( 1 , a , b )", "b" },
                { "$CHOICE(1, $(Items5), $(FOO))", "bar" },
                { "$CHOICE(1, $(List6c))", "bb" },
                { "$RANDOM_CHOICE(1)", "1" },
                { "$RANDOM_CHOICE(aa bb cc)", "aa bb cc" },
                { "$RANDOM_INTEGER(2,2,1)", "2" },
                { "$RANDOM_INTEGER(0,3,10)", "0" },
                { "$RANDOM_INTEGER( 7 , 7 )", "7" },
        };
        Config *cfg = fixture_config();

        CHECK_EXPANSIONS(cfg, cases);
        config_free(cfg);
}

/* ---- file names: every letter the manual lists ---- */

static void test_filename(void) {
        static const ExpandCase cases[] = {
                { "$Fn(fileBase)", "base" },
                { "$Fx(fileBase)", "" },
                { "$Fd(fileBase)", "" },
                { "$Fd(fileDirs)", "dur/" },
                { "$Fdx(fileDirs)", "dur/der" },
                { "$Fn(fileDirs)", "der" },
                { "$Fpnx(fileDirs)", "/dur/der" },
                { "$Fdnx(fileSimple)", "simple.dat" },
                { "$Fn(fileSimple)", "simple" },
                { "$Fx(fileSimple)", ".dat" },
                { "$Fnx(fileSimple)", "simple.dat" },
                { "$Fd(fileLong)", "" },
                { "$Fp(fileLong)", "" },
                { "$Fn(fileLong)", "Now is the time for all good men" },
                { "$Fx(fileLong)", "." },
                { "$F(fileCompound)", "/dur/der/base.ex" },
                { "$Fdnx(fileCompound)", "der/base.ex" },
                { "$Fd(fileCompound)", "der/" },
                { "$Fdb(fileCompound)", "der" },
                { "$Fddb(fileCompound)", "dur/der" },
                { "$Fp(fileCompound)", "/dur/der/" },
                { "$Fpb(fileCompound)", "/dur/der" },
                { "$Fpw(fileCompound)", "" }, /* '\' is no separator here, as on HTCondor's Linux */
                { "$Fqaw(fileCompound)", "'\\dur\\der\\base.ex'" },
                { "$Fn(fileCompound)", "base" },
                { "$Fx(fileCompound)", ".ex" },
                { "$Fxb(fileCompound)", "ex" },
                { "$Fpn(fileCompound)", "/dur/der/base" },
                { "$Fqpnx(fileAbs)", "\"/one/two/three.for\"" },
                { "$Fq(fileAbs)", "\"/one/two/three.for\"" },
                { "$Fqa(fileAbs)", "'/one/two/three.for'" },
                { "$Fd(fileAbsDeep)", "one/" },
                { "$Fdd(fileAbsDeep)", "two/one/" },
                { "$Fddd(fileAbsDeep)", "three/two/one/" },
                { "$Fddddddd(fileAbsDeep)", "/six/five/four/three/two/one/" },
                { "$Fdddddddddddd(fileAbsDeep)", "/six/five/four/three/two/one/" },
                { "$Fw(fileAbsDeep)", "\\six\\five\\four\\three\\two\\one\\file.ext" },
                { "$Fddxw(fileAbsDeep)", ".ext" },
                { "$Fdnx(urlAbs)", "two/three.for" },
                { "$Fp(urlAbs)", "file:/one/two/" },
                { "$Fdnx(fileAbsQuoted)", "two/three.for" },
                { "$Fpb(fileAbsQuoted)", "/one/two" },
                { "$Fqn(fileAbsQuoted)", "\"three\"" },
                { "$Fqan(fileAbsSQuoted)", "'three'" },
                { "$Fnx(fileAbsSQuoted)", "three.for" },
                { "$Fd(fileRel)", "zwei/" },
                { "$Fp(fileRel)", "ein/zwei/" },
                { "$Fnx(fileRelDeep)", "f.x" },
                { "$Fdb(fileRelDeep)", "e" },
                { "$Fdnx(fileRelSpaces)", "zw ei/dr ei.fir" },
                { "$Fp(fileRelSpaces)", "ein/zw ei/" },
                { "$Fd(fileCurRel)", "./" },
                { "$Fp(fileCurRel)", "./" },
                { "$Fx(fileCurRel)", "" },
                { "$Fd(fileUp1Rel)", "../" },
                { "$Fp(fileOver1Rel)", "../peer/" },
                { "$Fd(fileOver1Rel)", "peer/" },
                { "$Fpnx(fileCurRel2)", "./uno/dos.tres" },
                { "$Fd(fileCurRel2)", "uno/" },
                { "$Fnx(fileDoubleDot)", "boo..ox" },
                { "$Fn(fileDoubleDot)", "boo." },
                { "$BASENAME(fileDoubleDot, ..ox)", "boo" },
                { "$Fn(fileTarGz)", "stuff.tar" },
                { "$BASENAME(fileTarGz)", "stuff.tar.gz" },
                { "$BASENAME(fileTarGz,.gz)", "stuff.tar" },
                { "$BASENAME(fileTarGz, .TAR.GZ)", "stuff" },
                { "$BASENAME(fileTarGz,.tar)", "stuff.tar.gz" },
                { "$BASENAME(fileMultiDot,.x)", "b.o" },
                { "$BASENAME(fileMultiDot,b.o.x)", "" },
                { "$BASENAME(fileLong, all good men)", "Now is the time for all good men." },
                { "$BASENAME(fileLong,.)", "Now is the time for all good men" },
                { "$Fu(wfileRel)", "ein/zwei/drei.fir" },
                { "$Fdu(wfileRel)", "zwei/" },
                { "$Fnu(wfileRel)", "drei" },
                { "$Fdd(wUNCfileAbs)", "" }, /* no '/': a bare name here, as on HTCondor's Linux */
                { "$Fddu(wUNCfileAbs)", "one/two/" },
                { "$Fdu(wUNCfileAbs)", "two/" },
                { "$Fu(wUNCfileAbs)", "//server/share/one/two/file.ext" },
                /* in a configuration f has no directory to prefix */
                { "$Ff(fileRelDeep)", "a/b/c/d/e/f.x" },
                /* case of the letters does not matter, of F does */
                { "$FNX(fileAbs)", "three.for" },
                { "$F(Items5) ff", "aa bb cc dd ee ff" },
                { "\"$F(Items5Quoted) ff\"", "\"aa bb cc dd ee ff\"" },
                { "$DIRNAME(fileSimple)", "" },
                { "$DIRNAME(/a/b/)", "/a/b/" },
                { "$Fqd(fileBase)", "\"\"" },
        };
        Config *cfg = fixture_config();

        CHECK_EXPANSIONS(cfg, cases);
        config_free(cfg);
}

/* f prefixes the directory the expansion is given (the submit language's). */
static void test_filename_full(void) {
        static const ExpandCase cases[] = {
                { "$Fdf(fileBase)", "testing/" },
                { "$Fpf(fileBase)", "/home/testing/" },
                { "$Ff(fileRelDeep)", "/home/testing/a/b/c/d/e/f.x" },
                { "$Ffq(fileRelDeep)", "\"/home/testing/a/b/c/d/e/f.x\"" },
                { "$Ffddddd(fileRelDeep)", "a/b/c/d/e/" },
                { "$Ffdddddd(fileRelDeep)", "testing/a/b/c/d/e/" },
                { "$Ffw(fileRelDeep)", "\\home\\testing\\a\\b\\c\\d\\e\\f.x" },
                { "$Ffwqa(fileRelDeep)", "'\\home\\testing\\a\\b\\c\\d\\e\\f.x'" },
                { "$Ff(fileCurRel)", "/home/testing/here" },
                { "$Ff(fileUp1Rel)", "/home/testing/../file" },
                { "$Ffw(wfileCurRel)", "\\home\\testing\\here" },
                { "$Ff(wfileUp1Rel)", "/home/testing/..\\file" },
                { "$Ffu(wfileUp1Rel)", "/home/testing/../file" },
                { "$Ff(wfileRel)", "/home/testing/ein\\zwei\\drei.fir" },
                { "$Ffu(wfileRel)", "/home/testing/ein/zwei/drei.fir" },
                { "$Fpnxf(fileAbs)", "/one/two/three.for" },
                { "$Fpnxf(fileCurRel2)", "/home/testing/uno/dos.tres" },
                { "$Fdnxf(fileCurRel2)", "uno/dos.tres" },
                { "$Fpf(fileCurRel2)", "/home/testing/uno/" },
        };
        Config *cfg = fixture_config();

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int r = config_expand_full_cwd(cases[i].text, config_resolve, cfg, NULL, "/home/testing/", &v, &err);

                GLEAN_TEST_CHECK(r == 0 && strcmp(v, cases[i].value) == 0, "row %zu: '%s' gave %d '%s' (%s), want '%s'",
                                 i, cases[i].text, r, r == 0 ? v : "", err.msg, cases[i].value);
                free(v);
        }
        config_free(cfg);
}

/* ---- formats ---- */

typedef struct ErrorCase {
        const char *text;
        int r;
        const char *msg; /* the reason starts with this */
} ErrorCase;

static void check_errors(const Config *cfg, const ErrorCase *cases, size_t n, const char *table) {
        for (size_t i = 0; i < n; i++) {
                ConfigError err = {};
                char *v = NULL;
                int r = config_expand(cfg, cases[i].text, &v, &err);

                GLEAN_TEST_CHECK(r == cases[i].r, "%s row %zu: '%s' gave %d '%s', want %d", table, i, cases[i].text,
                                 r, r == 0 ? v : err.msg, cases[i].r);
                GLEAN_TEST_CHECK(r == 0 || strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
                                 "%s row %zu: reason '%s', want '%s'", table, i, err.msg, cases[i].msg);
                free(v);
        }
}

#define CHECK_ERRORS(cfg, cases) check_errors(cfg, cases, sizeof(cases) / sizeof((cases)[0]), #cases)

static void test_formats(void) {
        static const ExpandCase good[] = {
                { "$INT(X,%hhd)", "2" },
                { "$INT(X,%ld)", "2" },
                { "$INT(X,%lld)", "2" },
                { "$INT(X,100%%: %d)", "100%: 2" },
                { "$INT(X,%+d)", "+2" },
                { "$INT(X,%-4d|)", "2   |" },
                { "$INT(X,%#o)", "02" },
                { "$INT(X,%#x)", "0x2" },
                { "$INT(-1,%u)", "18446744073709551615" },
                { "$INT(X,%.3d)", "002" },
                { "$INT(X,%1024d)", NULL }, /* checked by length below */
                { "$REAL(X,%.2e)", "2.00e+00" },
                { "$REAL(X,%G)", "2.0" },
                { "$REAL(X,%a)", "0x1p+1" },
                { "$REAL(X,%Lf)", "2.000000" },
                { "$STRING(FOO,[%s])", "[bar]" },
                { "$STRING(FOO,%-5s|)", "bar  |" },
                { "$STRING(FOO,%.1s)", "b" },
        };
        static const ErrorCase bad[] = {
                { "$INT(X,%n)", -EINVAL, "$INT(X,%n): the format '%n' has %n, which is not allowed" },
                { "$INT(X,%lln)", -EINVAL, "$INT(X,%lln): the format '%lln' has %n" },
                { "$STRING(FOO,%s%n)", -EINVAL, "$STRING(FOO,%s%n): the format '%s%n' has more than one conversion" },
                { "$INT(X,%d%d)", -EINVAL, "$INT(X,%d%d): the format '%d%d' has more than one conversion" },
                { "$INT(X,%*d)", -EINVAL, "$INT(X,%*d): the format '%*d' takes its width from '*'" },
                { "$INT(X,%.*d)", -EINVAL, "$INT(X,%.*d): the format '%.*d' takes its width from '*'" },
                { "$INT(X,%1025d)", -EINVAL, "$INT(X,%1025d): the format '%1025d' is wider than 1024" },
                { "$INT(X,%99999999999999999999d)", -EINVAL, "$INT(X,%99999999999999999999d): the format" },
                { "$REAL(X,%.2000f)", -EINVAL, "$REAL(X,%.2000f): the format '%.2000f' has a precision above 1024" },
                { "$INT(X,%s)", -EINVAL, "$INT(X,%s): '%s' in the format '%s' is not a conversion for an integer" },
                { "$INT(X,%f)", -EINVAL, "$INT(X,%f): '%f' in the format '%f' is not a conversion for an integer" },
                { "$INT(X,%p)", -EINVAL, "$INT(X,%p): '%p' in the format" },
                { "$INT(X,%c)", -EINVAL, "$INT(X,%c): '%c' in the format" },
                { "$REAL(X,%d)", -EINVAL, "$REAL(X,%d): '%d' in the format '%d' is not a conversion for a real" },
                { "$STRING(FOO,%d)", -EINVAL, "$STRING(FOO,%d): '%d' in the format '%d' is not a conversion for a string" },
                { "$STRING(FOO,%#s)", -EINVAL, "$STRING(FOO,%#s): '%#' in the format" },
                { "$INT(X,Area)", -EINVAL, "$INT(X,Area): the format 'Area' has no conversion for an integer" },
                { "$INT(X,)", -EINVAL, "$INT(X,): the format '' has no conversion" },
                { "$INT(X,%)", -EINVAL, "$INT(X,%): the format '%' ends inside a conversion" },
                { "$INT(X,%-+ #0'-+ #0'd)", -EINVAL, "$INT(X,%-+ #0'-+ #0'd): the format '%-+ #0'-+ #0'd' repeats" },
        };
        Config *cfg = fixture_config();

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int r = config_expand(cfg, good[i].text, &v, &err);

                if (!good[i].value)
                        GLEAN_TEST_CHECK(r == 0 && strlen(v) == 1024 && v[1023] == '2', "row %zu: '%s' gave %d (%s)", i,
                                         good[i].text, r, err.msg);
                else
                        GLEAN_TEST_CHECK(r == 0 && strcmp(v, good[i].value) == 0, "row %zu: '%s' gave %d '%s' (%s), want '%s'",
                                         i, good[i].text, r, r == 0 ? v : "", err.msg, good[i].value);
                free(v);
        }
        CHECK_ERRORS(cfg, bad);
        config_free(cfg);
}

/* ---- errors ---- */

static void test_errors(void) {
        static const ErrorCase cases[] = {
                { "$INT(Items5)", -EINVAL, "$INT(Items5): 'aa bb cc dd ee' does not evaluate to an integer" },
                { "$INT()", -EINVAL, "$INT(): '' does not evaluate to an integer" },
                { "$INT(FOO,%d)", -EINVAL, "$INT(FOO,%d): 'bar' does not evaluate to an integer" },
                { "$INT(\"7\")", -EINVAL, "$INT(\"7\"): '\"7\"' does not evaluate to an integer" },
                { "$REAL(Items6)", -EINVAL, "$REAL(Items6): 'strcat(\"aa bb cc dd ee\",\" ff\")' does not evaluate to a real" },
                { "$SUBSTR(FOO)", -EINVAL, "$SUBSTR(FOO): takes a name, a start index and an optional length, not 1" },
                { "$SUBSTR(FOO,,)", -EINVAL, "$SUBSTR(FOO,,): the start index '' is not an integer" },
                { "$SUBSTR(FOO,1,zz)", -EINVAL, "$SUBSTR(FOO,1,zz): the length 'zz' is not an integer" },
                { "$SUBSTR(FOO,1,2,3)", -EINVAL, "$SUBSTR(FOO,1,2,3): takes a name" },
                { "$CHOICE()", -EINVAL, "$CHOICE(): takes an index and a list" },
                { "$CHOICE(1)", -EINVAL, "$CHOICE(1): takes an index and a list" },
                { "$CHOICE(1,)", -EINVAL, "$CHOICE(1,): no list" },
                { "$CHOICE(,a,b)", -EINVAL, "$CHOICE(,a,b): no index" },
                { "$CHOICE(10,list6c)", -EINVAL, "$CHOICE(10,list6c): index 10 is out of range (the list has 6 items)" },
                { "$CHOICE(-1,list6c)", -EINVAL, "$CHOICE(-1,list6c): index -1 is out of range" },
                { "$CHOICE(zz,a,b)", -EINVAL, "$CHOICE(zz,a,b): the index 'zz' is not an integer" },
                { "$CHOICE(Items5,a,b)", -EINVAL, "$CHOICE(Items5,a,b): the index 'aa bb cc dd ee' is not an integer" },
                { "$CHOICE(0,NOLIST)", -EINVAL, "$CHOICE(0,NOLIST): no list named NOLIST" },
                { "$RANDOM_CHOICE()", -EINVAL, "$RANDOM_CHOICE(): no list" },
                { "$RANDOM_INTEGER()", -EINVAL, "$RANDOM_INTEGER(): takes a minimum, a maximum and an optional step" },
                { "$RANDOM_INTEGER(1)", -EINVAL, "$RANDOM_INTEGER(1): takes a minimum" },
                { "$RANDOM_INTEGER(a,b)", -EINVAL, "$RANDOM_INTEGER(a,b): the minimum 'a' is not an integer" },
                { "$RANDOM_INTEGER(1,2x)", -EINVAL, "$RANDOM_INTEGER(1,2x): the maximum '2x' is not an integer" },
                { "$RANDOM_INTEGER(6,5)", -EINVAL, "$RANDOM_INTEGER(6,5): the minimum 6 is greater than the maximum 5" },
                { "$RANDOM_INTEGER(2,5,-4)", -EINVAL, "$RANDOM_INTEGER(2,5,-4): the step -4 is not positive" },
                { "$RANDOM_INTEGER(2,5,0)", -EINVAL, "$RANDOM_INTEGER(2,5,0): the step 0 is not positive" },
                { "$RANDOM_INTEGER(0,99999999999999999999)", -EINVAL, "$RANDOM_INTEGER(0,99999999999999999999): the maximum" },
                { "$BASENAME(a,b,c)", -EINVAL, "$BASENAME(a,b,c): takes a file name and an optional suffix" },
                { "$Fpz(fileAbs)", -EINVAL, "$Fpz(): 'z' is not a letter of the filename functions $F[fpduwnxbqa]()" },
                { "$FIND(fileAbs)", -EINVAL, "$FIND(): 'I' is not a letter" },
                { "$INT(FOO", -EINVAL, "'$INT(FOO' has no closing ')'" },
                { "$SUBSTR(Name, (1)", -EINVAL, "'$SUBSTR(Name, (1)' has no closing ')'" },
                { "$(1?", -EINVAL, "'$(1?' has no closing ')'" },
                { "$INT($(X ))", -EINVAL, "'$(X )': ' ' cannot be part of a macro name" },
        };
        Config *cfg = fixture_config();

        CHECK_ERRORS(cfg, cases);
        config_free(cfg);
}

/* An error names the file and line of the definition it is in. */
static void test_error_where(void) {
        static const struct {
                const char *text;
                const char *name; /* looked up; NULL: the load fails */
                int line;
                const char *msg;
        } cases[] = {
                { "A = 1\nB = $INT(FOO,%n)\nFOO = 3", "B", 2,
                  "$INT(FOO,%n): the format '%n' has %n, which is not allowed (in the value of B)" },
                { "A = 1\nB = $INT(FOO)\nFOO = x y", "B", 2,
                  "$INT(FOO): 'x y' does not evaluate to an integer (in the value of B)" },
                { "B = $(C)\nC = $SUBSTR(Name)\n", "B", 2,
                  "$SUBSTR(Name): takes a name, a start index and an optional length, not 1 argument (in the value of C)" },
                { "B = $CHOICE(0, L)\n\n\nC = $Fnx(B)\n", "C", 1,
                  "$CHOICE(0, L): no list named L" },
                { "A = 1\n\nC = $Fpz(A)", NULL, 3, "C: $Fpz(): 'z' is not a letter of the filename functions" },
                { "A = 1\nR = $RANDOM_INTEGER(1, x)", NULL, 2, "R: $RANDOM_INTEGER(1, x): the maximum 'x' is not an integer" },
                { "A = 1\nR = x $(NOPE:$RANDOM_INTEGER(3,1))", NULL, 2,
                  "R: $RANDOM_INTEGER(3,1): the minimum 3 is greater than the maximum 1" },
                { "R = $INT($RANDOM_CHOICE())", NULL, 1, "R: $RANDOM_CHOICE(): no list" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                Config *cfg = NULL;
                char *v = NULL;
                int r;

                GLEAN_TEST_CHECK_FATAL(config_new_empty(&cfg) == 0, "config_new_empty failed");
                r = config_load_string(cfg, cases[i].text, "t.conf", &err);
                if (cases[i].name) {
                        GLEAN_TEST_CHECK(r == 0, "row %zu: load failed: %s:%d: %s", i, err.file, err.line, err.msg);
                        err = (ConfigError){};
                        r = config_get(cfg, cases[i].name, &v, &err);
                }
                GLEAN_TEST_CHECK(r == -EINVAL, "row %zu: %d, want -EINVAL", i, r);
                GLEAN_TEST_CHECK(strcmp(err.file, "t.conf") == 0 && err.line == cases[i].line,
                                 "row %zu: at %s:%d, want t.conf:%d", i, err.file, err.line, cases[i].line);
                GLEAN_TEST_CHECK(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0, "row %zu: '%s', want '%s'",
                                 i, err.msg, cases[i].msg);
                free(v);
                config_free(cfg);
        }
}

/* ---- text that is not a function ---- */

static void test_literal(void) {
        static const ExpandCase cases[] = {
                /* unknown $NAME( and the wrong case stay text, as HTCondor leaves them */
                { "$FOO(x) $int(X) $Unknown(y) $Eval(1) $F_x(y) $FILE(z)", "$FOO(x) $int(X) $Unknown(y) $Eval(1) $F_x(y) $FILE(z)" },
                { "$$(INT) $$INT(x)", "$$(INT) $$INT(x)" },
                { "$(DOLLAR)INT(X)", "$INT(X)" },
                { "cost $ 5, $INT", "cost $ 5, $INT" },
                /* metaknob arguments: kept, $(N) and $(N:default) are ordinary names */
                { "$(TPL)", "$(1?) $(0#) $(2+) $(1?:x)  Default" },
                { "$(1?)", "$(1?)" },
                { "$(12#)", "$(12#)" },
                { "$(1?:$(FOO))", "$(1?:$(FOO))" },
                /* a function's result is not expanded again */
                { "$STRING(\"$(FOO)\")", "bar" },
                { "$EVAL(\"$$(x)\")", "$$(x)" },
                /* functions nest, in defaults and in arguments */
                { "$(NOPE:$INT(XYArea,%03d))", "012" },
                { "$INT($CHOICE(1,3,4) * 2)", "8" },
                { "$SUBSTR($(Name), $INT(1+1), $(X))", "cd" },
                { "$INT(max({1,$(Y),3}))", "6" },
        };
        Config *cfg = fixture_config();

        CHECK_EXPANSIONS(cfg, cases);
        GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "TPL"), "$(1?) $(0#) $(2+) $(1?:x) $(1) $(2:Default)") == 0,
                         "TPL raw '%s'", config_raw(cfg, "TPL"));
        config_free(cfg);
}

/* ---- random draws ---- */

static int64_t draw(const Config *cfg, const char *text) {
        ConfigError err = {};
        char *v = NULL, *end;
        int64_t n;

        GLEAN_TEST_CHECK_FATAL(config_expand(cfg, text, &v, &err) == 0, "'%s': %s", text, err.msg);
        n = strtoll(v, &end, 10);
        GLEAN_TEST_CHECK_FATAL(*v && !*end, "'%s' gave '%s'", text, v);
        free(v);
        return n;
}

static void test_random_integer(void) {
        static const struct {
                const char *text;
                int64_t min, max, step;
        } cases[] = {
                { "$RANDOM_INTEGER(0, 8, 2)", 0, 8, 2 },
                { "$RANDOM_INTEGER(-30,30,1)", -30, 30, 1 },
                { "$RANDOM_INTEGER(0,300)", 0, 300, 1 },
                { "$RANDOM_INTEGER(-10,0,2)", -10, 0, 2 },
                { "$RANDOM_INTEGER(-1000,-99,3)", -1000, -99, 3 },
                { "$RANDOM_INTEGER(3,9,3)", 3, 9, 3 },
                { "$RANDOM_INTEGER(0,9,3)", 0, 9, 3 },
                { "$RANDOM_INTEGER(1,4)", 1, 4, 1 },
                { "$RANDOM_INTEGER($(X),$(Y))", 2, 6, 1 },
        };
        Config *cfg = fixture_config();

        config_random_seed(20261204);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int64_t span = (cases[i].max - cases[i].min) / cases[i].step + 1;
                bool seen[400] = { false }, all = true, in_range = true;

                for (int k = 0; k < 10000; k++) {
                        int64_t v = draw(cfg, cases[i].text);

                        if (v < cases[i].min || v > cases[i].max || (v - cases[i].min) % cases[i].step != 0) {
                                in_range = false;
                                GLEAN_TEST_CHECK(false, "row %zu: '%s' drew %lld", i, cases[i].text, (long long) v);
                                break;
                        }
                        seen[(v - cases[i].min) / cases[i].step] = true;
                }
                for (int64_t k = 0; k < span; k++)
                        all = all && seen[k];
                GLEAN_TEST_CHECK(in_range && all, "row %zu: '%s': not every one of %lld values drawn in 10,000", i,
                                 cases[i].text, (long long) span);
        }

        /* the extremes of int64 */
        for (int k = 0; k < 100; k++) {
                (void) draw(cfg, "$RANDOM_INTEGER(-9223372036854775808, 9223372036854775807)");
                GLEAN_TEST_CHECK(draw(cfg, "$RANDOM_INTEGER(9223372036854775806, 9223372036854775807, 5)") ==
                                         INT64_MAX - 1,
                                 "a step past the end");
                int64_t v = draw(cfg, "$RANDOM_INTEGER(-9223372036854775808, 9223372036854775807, 4611686018427387904)");
                GLEAN_TEST_CHECK(v == INT64_MIN || v == INT64_MIN / 2 || v == 0 || v == INT64_MAX / 2 + 1,
                                 "wide step drew %lld", (long long) v);
        }
        config_free(cfg);
}

static void test_random_choice(void) {
        static const struct {
                const char *text;
                const char *items[10];
        } cases[] = {
                { "$RANDOM_CHOICE(0,1,2,3,4,5,6,7,8)", { "0", "1", "2", "3", "4", "5", "6", "7", "8" } },
                { "$RANDOM_CHOICE(aa, bb ,cc)", { "aa", "bb", "cc" } },
                { "$RANDOM_CHOICE(List6c)", { "aa", "bb", "cc", "dd", "ee", "ff" } },
                { "$RANDOM_CHOICE($(FOO),$(X))", { "bar", "2" } },
        };
        Config *cfg = fixture_config();

        config_random_seed(7);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool seen[10] = { false };
                size_t n = 0;

                while (n < 10 && cases[i].items[n])
                        n++;
                for (int k = 0; k < 10000; k++) {
                        ConfigError err = {};
                        char *v = NULL;
                        size_t j;

                        GLEAN_TEST_CHECK_FATAL(config_expand(cfg, cases[i].text, &v, &err) == 0, "%s", err.msg);
                        for (j = 0; j < n && strcmp(v, cases[i].items[j]) != 0; j++)
                                ;
                        GLEAN_TEST_CHECK(j < n, "row %zu: '%s' drew '%s'", i, cases[i].text, v);
                        if (j < n)
                                seen[j] = true;
                        free(v);
                        if (j == n)
                                break;
                }
                for (size_t j = 0; j < n; j++)
                        GLEAN_TEST_CHECK(seen[j], "row %zu: '%s' never drawn in 10,000", i, cases[i].items[j]);
        }
        config_free(cfg);
}

/* The same seed, the same draws; another seed, others. */
static void test_random_seed(void) {
        Config *cfg = fixture_config();
        int64_t a[32], b[32], c[32];
        bool same_ab = true, same_ac = true;

        config_random_seed(12345);
        for (int i = 0; i < 32; i++)
                a[i] = draw(cfg, "$RANDOM_INTEGER(0, 1000000000)");
        config_random_seed(12345);
        for (int i = 0; i < 32; i++)
                b[i] = draw(cfg, "$RANDOM_INTEGER(0, 1000000000)");
        config_random_seed(54321);
        for (int i = 0; i < 32; i++)
                c[i] = draw(cfg, "$RANDOM_INTEGER(0, 1000000000)");
        for (int i = 0; i < 32; i++) {
                same_ab = same_ab && a[i] == b[i];
                same_ac = same_ac && a[i] == c[i];
        }
        GLEAN_TEST_CHECK(same_ab, "the same seed drew other values");
        GLEAN_TEST_CHECK(!same_ac, "another seed drew the same values");
        config_free(cfg);
}

/* A configuration line draws once, when it is read: every lookup sees the
 * same value, and the stored value is the draw. */
static void test_random_when_read(void) {
        static const char text[] =
                "N = 4\n"
                "R = $RANDOM_INTEGER(0, 1000000000)\n"
                "C = x$RANDOM_CHOICE(a,b,c)y\n"
                "D = $(NOPE:$RANDOM_INTEGER(10,$(N)0))\n"
                "S = $INT($RANDOM_INTEGER(1,9) * 100, %05d)\n"
                "K = $CHOICE($RANDOM_INTEGER(0,2), p, q, r)\n"
                "L = $RANDOM_CHOICE(LIST)\n"
                "LIST = late, list\n"
                "LIST2 = $(LIST), more\n"
                "R = $(R)+$RANDOM_INTEGER(5,5)\n";
        char *first[8] = { NULL }, *again = NULL;
        const char *names[] = { "R", "C", "D", "S", "K", "L" };
        ConfigError err = {};
        Config *cfg = NULL, *cfg2 = NULL;

        config_random_seed(99);
        GLEAN_TEST_CHECK_FATAL(config_new_empty(&cfg) == 0, "config_new_empty failed");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "r.conf", &err) == 0, "%s:%d: %s", err.file, err.line,
                               err.msg);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                const char *raw = config_raw(cfg, names[i]);

                GLEAN_TEST_CHECK(raw && !strstr(raw, "$RANDOM_"), "%s raw '%s' still has the function", names[i], raw);
                GLEAN_TEST_CHECK_FATAL(config_get(cfg, names[i], &first[i], &err) == 0, "%s: %s", names[i], err.msg);
                for (int k = 0; k < 20; k++) {
                        GLEAN_TEST_CHECK_FATAL(config_get(cfg, names[i], &again, &err) == 0, "%s", err.msg);
                        GLEAN_TEST_CHECK(strcmp(first[i], again) == 0, "%s: '%s' then '%s'", names[i], first[i], again);
                        free(again);
                }
        }
        /* R built on its first draw, + 5 */
        GLEAN_TEST_CHECK(strstr(config_raw(cfg, "R"), "+5") != NULL, "R raw '%s'", config_raw(cfg, "R"));
        GLEAN_TEST_CHECK(strlen(first[1]) == 3 && first[1][0] == 'x' && strchr("abc", first[1][1]) && first[1][2] == 'y',
                         "C = '%s'", first[1]);
        GLEAN_TEST_CHECK(atoi(first[2]) >= 10 && atoi(first[2]) <= 40, "D = '%s'", first[2]);
        /* the format is " %05d": everything after the comma */
        GLEAN_TEST_CHECK(strlen(first[3]) == 6 && strncmp(first[3], " 00", 3) == 0 && strcmp(first[3] + 4, "00") == 0,
                         "S = '%s'", first[3]);
        GLEAN_TEST_CHECK(strcmp(first[4], "p") == 0 || strcmp(first[4], "q") == 0 || strcmp(first[4], "r") == 0,
                         "K = '%s'", first[4]);
        /* LIST was not defined yet when L was read: the name itself */
        GLEAN_TEST_CHECK(strcmp(first[5], "LIST") == 0, "L = '%s'", first[5]);

        /* the same seed reads the same configuration */
        config_random_seed(99);
        GLEAN_TEST_CHECK_FATAL(config_new_empty(&cfg2) == 0, "config_new_empty failed");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg2, text, "r.conf", &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "R"), config_raw(cfg2, "R")) == 0, "R: '%s' and '%s'",
                         config_raw(cfg, "R"), config_raw(cfg2, "R"));

        /* a self-reference inside a function's body builds on the previous value */
        GLEAN_TEST_CHECK(config_set(cfg, "N", "$INT($(N) * 3)") == 0 && strcmp(config_raw(cfg, "N"), "$INT(4 * 3)") == 0,
                         "N raw '%s'", config_raw(cfg, "N"));
        GLEAN_TEST_CHECK(config_get(cfg, "N", &again, &err) == 0 && strcmp(again, "12") == 0, "N = '%s' (%s)", again,
                         err.msg);
        free(again);

        /* config_set draws too */
        GLEAN_TEST_CHECK(config_set(cfg, "Z", "$RANDOM_INTEGER(3, 3)") == 0 && strcmp(config_raw(cfg, "Z"), "3") == 0,
                         "Z raw '%s'", config_raw(cfg, "Z"));
        for (size_t i = 0; i < 8; i++)
                free(first[i]);
        config_free(cfg);
        config_free(cfg2);
}

/* ---- bounds ---- */

static void test_bounds(void) {
        ConfigError err = {};
        Config *cfg = fixture_config();
        char *text, *v = NULL;
        size_t len = 0;
        int r;

        /* the evaluation budget: an error, not ERROR */
        len = (size_t) snprintf(NULL, 0, "x");
        text = malloc(4096);
        GLEAN_TEST_CHECK_FATAL(text != NULL, "malloc");
        len = (size_t) snprintf(text, 4096, "[ R = (");
        for (int i = 0; i < 20; i++)
                len += (size_t) snprintf(text + len, 4096 - len, "%seval(unparse(R))", i ? " + " : "");
        snprintf(text + len, 4096 - len, ") >= 0 || true ].R");
        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "HEAVY", text) == 0, "config_set failed");
        free(text);
        const char *heavy[] = { "$EVAL(HEAVY)", "$INT(HEAVY)", "$REAL(HEAVY)", "$STRING(HEAVY)", "$CHOICE(HEAVY,a,b)",
                                "$SUBSTR(Name,HEAVY)" };
        for (size_t i = 0; i < sizeof(heavy) / sizeof(heavy[0]); i++) {
                err = (ConfigError){};
                r = config_expand(cfg, heavy[i], &v, &err);
                GLEAN_TEST_CHECK(r == -E2BIG && strstr(err.msg, "takes more than the ClassAd evaluation budget"),
                                 "'%s': %d '%s'", heavy[i], r, err.msg);
                free(v);
                v = NULL;
        }

        /* at most 256 evaluations a lookup */
        text = malloc(300 * 8 + 1);
        GLEAN_TEST_CHECK_FATAL(text != NULL, "malloc");
        len = 0;
        for (int i = 0; i < 300; i++)
                len += (size_t) sprintf(text + len, "$EVAL(1)");
        err = (ConfigError){};
        r = config_expand(cfg, text, &v, &err);
        GLEAN_TEST_CHECK(r == -E2BIG && strstr(err.msg, "more than 256 macro functions evaluate"), "%d '%s'", r,
                         err.msg);
        free(v);
        v = NULL;
        text[256 * 8] = '\0';
        r = config_expand(cfg, text, &v, &err);
        GLEAN_TEST_CHECK(r == 0 && strlen(v) == 256, "256 evaluations: %d", r);
        free(v);
        v = NULL;
        free(text);

        /* functions nested past the depth limit */
        text = malloc(200 * 12 + 16);
        GLEAN_TEST_CHECK_FATAL(text != NULL, "malloc");
        len = 0;
        for (int i = 0; i < 200; i++)
                len += (size_t) sprintf(text + len, "$SUBSTR(");
        len += (size_t) sprintf(text + len, "x");
        for (int i = 0; i < 200; i++)
                len += (size_t) sprintf(text + len, ",0)");
        err = (ConfigError){};
        r = config_expand(cfg, text, &v, &err);
        GLEAN_TEST_CHECK(r == -ELOOP && strstr(err.msg, "nested more than 64 levels"), "%d '%s'", r, err.msg);
        free(v);
        v = NULL;
        free(text);

        /* a width of 1024 a thousand times: the output bound holds */
        text = malloc(1100 * 20);
        GLEAN_TEST_CHECK_FATAL(text != NULL, "malloc");
        len = 0;
        for (int i = 0; i < 1100; i++)
                len += (size_t) sprintf(text + len, "$INT(1,%%1024d)");
        err = (ConfigError){};
        r = config_expand(cfg, text, &v, &err);
        GLEAN_TEST_CHECK(r == -E2BIG && strstr(err.msg, "expansion produces more than"), "%d '%s'", r, err.msg);
        free(v);
        free(text);

        /* a loop through a function's name argument */
        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "LA", "$INT(LB)") == 0 && config_set(cfg, "LB", "$SUBSTR(LA,1)") == 0,
                               "config_set");
        v = NULL;
        r = config_get(cfg, "LA", &v, &err);
        GLEAN_TEST_CHECK(r == -ELOOP && strstr(err.msg, "macro expansion loop: LA -> LB -> LA"), "%d '%s'", r, err.msg);
        free(v);
        config_free(cfg);
}

/* ---- HTCondor's files that use them ---- */

static void test_htcondor_files(void) {
        Config *cfg = NULL;
        ConfigError err = {};
        char *v = NULL;
        int64_t n;

        /* the annotated example: UWCS_PERIODIC_CHECKPOINT with $RANDOM_INTEGER(-30,30,1) */
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new failed");
        GLEAN_TEST_CHECK(config_load_file(cfg, "tests/config/htcondor/examples/condor_config.annotated", &err) == 0,
                         "annotated: %s:%d: %s", err.file, err.line, err.msg);
        GLEAN_TEST_CHECK(config_get(cfg, "UWCS_PERIODIC_CHECKPOINT", &v, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK(v && strstr(v, "(3 * (60 * 60) + ") && strstr(v, " * 60 )"), "UWCS_PERIODIC_CHECKPOINT = '%s'",
                         v);
        free(v);
        v = NULL;
        config_free(cfg);

        /* startd.UPDATE_OFFSET = $RANDOM_INTEGER(0,300) */
        for (int k = 0; k < 20; k++) {
                GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new failed");
                GLEAN_TEST_CHECK(config_load_file(cfg, "tests/config/htcondor/manual/configuration-startd-02.conf",
                                                  &err) == 0,
                                 "startd-02: %s:%d: %s", err.file, err.line, err.msg);
                GLEAN_TEST_CHECK(config_get_int(cfg, "startd.UPDATE_OFFSET", &n, &err) == 0 && n >= 0 && n <= 300,
                                 "UPDATE_OFFSET %lld (%s)", (long long) n, err.msg);
                config_free(cfg);
        }

        /* a submit template with $(1?): kept as written */
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new failed");
        GLEAN_TEST_CHECK(config_load_file(cfg, "tests/config/htcondor/manual/configuration-schedd-15.conf", &err) == 0,
                         "schedd-15: %s:%d: %s", err.file, err.line, err.msg);
        const char *raw = config_raw(cfg, "SUBMIT_TEMPLATE_Slurm");
        GLEAN_TEST_CHECK(raw && strstr(raw, "if ! $(1?)\n") && strstr(raw, "batch_queue = $(2:Default)"), "raw '%s'",
                         raw);
        GLEAN_TEST_CHECK(config_get(cfg, "SUBMIT_TEMPLATE_Slurm", &v, &err) == 0 && strstr(v, "if ! $(1?)\n") &&
                                 strstr(v, "batch_queue = Default"),
                         "expanded '%s' (%s)", v, err.msg);
        free(v);
        config_free(cfg);
}

/* ---- the submit language ---- */

static void test_submit(void) {
        static const char text[] =
                "executable = /bin/sh\n"
                "MyIndex = $(Process) + 1\n"
                "initialdir = run-$INT(MyIndex,%04d)\n"
                "input = $Ff(in/data.$(Process).txt)\n"
                "output = $Fn(input).out\n"
                "arguments = $CHOICE(Step, alpha, beta) $REAL(Process,%.1f) $Fqanx(x y/z.c) $SUBSTR(item,-2)\n"
                "+Pick = $RANDOM_INTEGER(0, 1000000000)\n"
                "+Word = \"$RANDOM_CHOICE(red,green,blue)\"\n"
                "queue 2 item in (first, second)\n";
        static const char *const expect[] = {
                "0:Iwd ~ /run-0001",
                "1:Iwd ~ /run-0002",
                "2:Iwd ~ /run-0003",
                "3:Iwd ~ /run-0004",
                "0:In = \"" SUBMIT_TEST_IWD "/in/data.0.txt\"",
                "3:In = \"" SUBMIT_TEST_IWD "/in/data.3.txt\"",
                "0:Out ~ data.0.out",
                "0:Args = \"alpha 0.0 'z.c' st\"",
                "1:Args = \"beta 1.0 'z.c' st\"",
                "2:Args = \"alpha 2.0 'z.c' nd\"",
                "3:Args = \"beta 3.0 'z.c' nd\"",
        };
        ClassAd **ads = NULL;
        ConfigError err = {};
        size_t n = 0;
        int64_t picks[4];
        bool differ = false;

        config_random_seed(4242);
        GLEAN_TEST_CHECK_FATAL(submit_test_parse(text, NULL, false, &ads, &n, &err) == 0, "%s:%d: %s", err.file,
                               err.line, err.msg);
        GLEAN_TEST_CHECK_FATAL(n == 4, "%zu jobs", n);
        for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
                submit_test_expect(ads, n, expect[i], "submit");
        /* HTCondor draws for every job */
        for (size_t i = 0; i < n; i++) {
                char *w = NULL;

                GLEAN_TEST_CHECK(classad_eval_int(ads[i], "Pick", CA_MODE_OLD, &picks[i]) == 0 && picks[i] >= 0 &&
                                         picks[i] <= 1000000000,
                                 "job %zu Pick", i);
                GLEAN_TEST_CHECK(classad_eval_string(ads[i], "Word", CA_MODE_OLD, &w) == 0 &&
                                         (strcmp(w, "red") == 0 || strcmp(w, "green") == 0 || strcmp(w, "blue") == 0),
                                 "job %zu Word '%s'", i, w);
                free(w);
                differ = differ || picks[i] != picks[0];
        }
        GLEAN_TEST_CHECK(differ, "every job drew %lld", (long long) picks[0]);
        config_submit_free(ads, n);
}

static void test_submit_errors(void) {
        static const struct {
                const char *text;
                int line;
                const char *msg;
        } cases[] = {
                { "executable = /bin/sh\narguments = $INT(Process,%n)\nqueue", 2,
                  "$INT(Process,%n): the format '%n' has %n, which is not allowed" },
                { "executable = /bin/sh\n\narguments = $CHOICE(Process, a)\nqueue", 3, "$CHOICE(Process, a): no list named a" },
                { "executable = /bin/sh\nx = $SUBSTR(y)\narguments = $(x)\nqueue", 2, "$SUBSTR(y): takes a name" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ClassAd **ads = NULL;
                ConfigError err = {};
                size_t n = 0;
                int r = submit_test_parse(cases[i].text, NULL, false, &ads, &n, &err);

                GLEAN_TEST_CHECK(r < 0 && strcmp(err.file, "test.sub") == 0 && err.line == cases[i].line &&
                                         strstr(err.msg, cases[i].msg),
                                 "row %zu: %d %s:%d: %s", i, r, err.file, err.line, err.msg);
                if (r >= 0)
                        config_submit_free(ads, n);
        }
}

/* ---- config_expand_with reaches them too ---- */

static const char *with_lookup(void *userdata, const char *name) {
        (void) userdata;
        if (strcasecmp(name, "file") == 0)
                return "/data/run.$(n).tar.gz";
        if (strcasecmp(name, "n") == 0)
                return "7";
        return NULL;
}

static void test_expand_with(void) {
        static const ExpandCase cases[] = {
                { "$Fn(file)", "run.7.tar" },
                { "$BASENAME(file, .tar.gz)", "run.7" },
                { "$INT(n,%03d)", "007" },
                { "$CHOICE(1, a, $(n))", "7" },
                { "$RANDOM_INTEGER($(n), 7)", "7" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int r = config_expand_with(cases[i].text, with_lookup, NULL, &v, &err);

                GLEAN_TEST_CHECK(r == 0 && strcmp(v, cases[i].value) == 0, "row %zu: '%s' gave %d '%s' (%s)", i,
                                 cases[i].text, r, r == 0 ? v : "", err.msg);
                free(v);
        }
}

static CU_TestInfo tests[] = {
        { "manual-examples", test_manual_examples },
        { "htcondor-vectors", test_htcondor_vectors },
        { "filename", test_filename },
        { "filename-full", test_filename_full },
        { "formats", test_formats },
        { "errors", test_errors },
        { "error-where", test_error_where },
        { "literal", test_literal },
        { "random-integer", test_random_integer },
        { "random-choice", test_random_choice },
        { "random-seed", test_random_seed },
        { "random-when-read", test_random_when_read },
        { "bounds", test_bounds },
        { "htcondor-files", test_htcondor_files },
        { "expand-with", test_expand_with },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo submit_tests[] = {
        { "functions", test_submit },
        { "errors", test_submit_errors },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "macrofn", NULL, NULL, NULL, NULL, tests },
        { "submit", NULL, NULL, NULL, NULL, submit_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}
