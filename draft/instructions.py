"""Instructions whose answers by the target model are the draft's chat data.

The target's own greedy answers to these (``data.py``) teach the draft what the model writes after a chat
prompt. ``instructions()`` are this repository's own text (its licence); ``library_instructions()`` are made
from the first lines of the docstrings of Python's standard library on this machine (Python Software Foundation
License 2.0), one coding request each. None of them is a benchmark prompt (``benchmarks/draft_prompts.json``);
``tests/test_draft.py`` checks that the sets do not meet.
"""

import ast
import functools
import re
import sysconfig
from pathlib import Path

CODE_TASKS = [
    "reverses a string", "checks whether a number is prime", "returns the n-th Fibonacci number",
    "counts the vowels in a sentence", "merges two sorted lists", "removes duplicates from a list but keeps the order",
    "flattens a nested list", "computes the factorial of n iteratively", "finds the largest element in a list",
    "checks whether a string is a palindrome", "converts Celsius to Fahrenheit", "sums the digits of an integer",
    "returns the greatest common divisor of two numbers", "splits a list into chunks of size n",
    "counts how often each word appears in a text", "reads a CSV file and returns its rows as dictionaries",
    "validates an email address with a regular expression", "transposes a matrix given as a list of lists",
    "returns the median of a list of numbers", "capitalises the first letter of every word",
    "finds all anagrams of a word in a list", "implements binary search on a sorted list",
    "rotates a list by k positions", "converts a Roman numeral to an integer", "checks if two strings are anagrams",
    "returns the intersection of two lists", "generates all permutations of a string", "computes the power set of a set",
    "parses a date string in ISO format", "returns the longest common prefix of a list of strings",
    "implements bubble sort", "implements quicksort", "counts the lines in a text file",
    "returns the second largest number in a list", "checks whether brackets in a string are balanced",
    "converts a decimal number to binary", "finds the missing number in a list from 1 to n",
    "computes the average of the values in a dictionary", "groups words by their first letter",
    "removes all whitespace from a string", "returns the n most common elements of a list",
    "converts a list of pairs into a dictionary", "checks whether a year is a leap year",
    "computes the dot product of two vectors", "returns every other element of a list",
    "implements a stack class with push and pop", "implements a queue using two stacks",
    "memoises a slow function with a decorator", "retries a function three times when it raises",
    "times how long a function takes to run", "writes a list of dictionaries to a JSON file",
]
CODE_LANGUAGES = ["Python", "JavaScript", "Python", "TypeScript", "Python", "Go", "Python", "Rust", "Python", "Java"]

CONCEPTS = [
    "recursion", "a hash table", "big-O notation", "a closure", "a generator in Python", "the difference between a list "
    "and a tuple", "a race condition", "a REST API", "garbage collection", "a unit test", "dependency injection",
    "a binary tree", "the difference between a process and a thread", "an SQL join", "version control",
    "a virtual environment", "a decorator in Python", "immutability", "a linked list", "caching", "a regular expression",
    "the event loop in JavaScript", "type hints in Python", "a lambda function", "exceptions and error handling",
    "the difference between == and is in Python", "list comprehensions", "an iterator", "a context manager",
    "object-oriented programming", "inheritance", "polymorphism", "a compiler", "an interpreter", "a database index",
    "a deadlock", "pagination", "HTTP status codes", "JSON", "unicode and UTF-8",
]

GENERAL = [
    "Write a short poem about the sea.", "Give three tips for learning to play the guitar.",
    "Describe a sunrise in the mountains in two sentences.", "What are the benefits of regular exercise?",
    "Summarise the plot of Romeo and Juliet in three sentences.", "Write a polite email asking for a meeting next week.",
    "List five fruits that are rich in vitamin C.", "Explain how a rainbow forms.", "What is the water cycle?",
    "Give me a recipe for a simple tomato soup.", "Write a haiku about autumn leaves.",
    "Why is the sky blue?", "Describe the rules of chess in a few sentences.", "What causes the seasons on Earth?",
    "Write a short story about a robot who learns to paint.", "How do airplanes stay in the air?",
    "Give three reasons to read more books.", "Explain what inflation is to a child.",
    "What is the difference between weather and climate?", "Write a limerick about a cat.",
    "Describe the life cycle of a butterfly.", "How does a refrigerator keep food cold?",
    "Suggest a name for a new coffee shop and explain it.", "What should I pack for a weekend hike?",
    "Explain the greenhouse effect in simple words.", "Write two sentences about the history of Rome.",
    "How do vaccines work?", "List the planets of the solar system in order.",
    "Write a thank-you note to a teacher.", "What makes a good presentation?",
]

REWRITES = [
    "Rewrite in the past tense: \"She walks to the station and buys a ticket.\"",
    "Make this sentence more formal: \"Hey, can you send me the report asap?\"",
    "Translate into French: \"The weather is nice today.\"",
    "Correct the grammar: \"He don't like apples and she don't neither.\"",
    "Turn this list into a sentence: milk, eggs, bread, butter.",
    "Rewrite this function with a list comprehension:\nresult = []\nfor x in items:\n    if x > 0:\n        result.append(x * 2)",
    "Add type hints to this function:\ndef area(width, height):\n    return width * height",
    "Rename the variables to meaningful names:\ndef f(a, b):\n    c = a * b\n    return c / 2",
    "Add a docstring to this function:\ndef mean(values):\n    return sum(values) / len(values)",
    "Rewrite this loop as a while loop:\nfor i in range(10):\n    print(i)",
    "Shorten this sentence: \"At this point in time we are not in a position to make a decision.\"",
    "Rewrite in the future tense: \"The team finished the project on time.\"",
    "Convert this JSON to YAML: {\"name\": \"Ada\", \"age\": 36, \"languages\": [\"English\", \"French\"]}",
    "Fix the bug in this code:\ndef add_all(numbers):\n    total = 0\n    for n in numbers:\n        total = n\n    return total",
    "Rewrite this SQL query to select only active users: SELECT * FROM users;",
    "Make this paragraph simpler: \"The utilisation of advanced methodologies facilitates optimal outcomes.\"",
    "Translate into Spanish: \"Where is the nearest train station?\"",
    "Change the function to use f-strings:\ndef greet(name):\n    return 'Hello, ' + name + '!'",
    "Rewrite the text in the first person: \"He woke up early and went for a run.\"",
    "Split this long sentence into two: \"The meeting ran late because the projector broke and nobody knew how to fix it.\"",
]


# Tasks of other shapes than "Write a function that ...": classes, scripts, queries, reviews, shell, tests.
MORE_CODE = [
    "Write a Python class for a to-do list with add, remove and show methods.",
    "Write a Python class that represents a 2D point with a method for the distance to another point.",
    "Write a Python script that renames every .txt file in a folder to lower case.",
    "Write a Python script that downloads nothing but prints the size of every file in the current directory.",
    "Write a SQL query that counts the customers in each country.",
    "Write a SQL query that finds the products that were never ordered.",
    "Write a bash command that finds the ten largest files under the home directory.",
    "Write a JavaScript function that deep-clones a plain object.",
    "Write a TypeScript interface for a user with a name, an email and an optional age.",
    "Write unit tests with pytest for a function that adds two numbers.",
    "Write a Python dataclass for a book with a title, an author and a year.",
    "Write a Python generator that yields the squares of the numbers from 1 to n.",
    "Write a regular expression that matches a date like 2024-01-31 and explain it.",
    "Write a Python function with type hints that parses a key=value string into a dictionary.",
    "Write an HTML page with a form that asks for a name and an email.",
    "Write a CSS rule that centres a div horizontally and vertically.",
    "Write a Dockerfile for a small Python web application.",
    "Write a Python context manager that changes the working directory and changes it back.",
    "Write a Go program that prints the numbers from 1 to 100.",
    "Write a Rust function that returns the largest value in a vector of integers.",
    "Review this code and suggest improvements:\n"
    "def get(d, k):\n    if k in d.keys():\n        return d[k]\n    else:\n        return None",
    "What does this code print?\nx = [1, 2, 3]\ny = x\ny.append(4)\nprint(x)",
    "Explain what this line does: result = [w for w in words if len(w) > 3]",
    "Why does this code raise an error?\nnumbers = [1, 2, 3]\nprint(numbers[3])",
    "Write a Python function that reads a JSON file and returns the value of the key 'name'.",
    "Write an async Python function that waits one second and returns 'done'.",
    "Write a Python script that asks the user for a number and says whether it is even.",
    "Write a Python function that converts a string in snake_case to camelCase.",
    "Write a Java class with a main method that prints the current date.",
    "Write a Python function that formats a number of seconds as hours, minutes and seconds.",
]
MORE_GENERAL = [
    "Write a short poem about a city at night.", "Give three tips for sleeping better.",
    "Describe how a bicycle works in a few sentences.", "What are the main causes of soil erosion?",
    "Write a short story about a lighthouse keeper.", "Explain gravity to a ten-year-old.",
    "List four ways to reduce plastic waste.", "Write a friendly message inviting a colleague to lunch.",
    "What is the difference between a virus and a bacterium?", "Give me a packing list for a beach holiday.",
    "Explain how a bill becomes a law in general terms.", "Describe the taste of a lemon to someone who never had one.",
    "What are three good habits for a student?", "Explain what a budget is and why it helps.",
    "Write a short product description for a reusable water bottle.", "How do bees make honey?",
    "Give two arguments for and two against working from home.", "Describe a forest after the rain.",
    "What is a black hole, in simple words?", "Write a motivational sentence for someone learning to code.",
]
MORE_REWRITES = [
    "Rewrite in the passive voice: \"The committee approved the new budget.\"",
    "Translate into Italian: \"Good morning, how are you?\"",
    "Make this message shorter: \"I am writing to let you know that I will not be able to attend the meeting "
    "tomorrow.\"",
    "Turn these notes into a sentence: meeting moved, Friday, 3 pm, room 2.",
    "Rewrite this function so it uses enumerate:\nfor i in range(len(names)):\n    print(i, names[i])",
    "Add comments to this code:\ndef clamp(x, low, high):\n    return max(low, min(x, high))",
    "Convert this function to JavaScript:\ndef double(values):\n    return [v * 2 for v in values]",
    "Simplify this condition: if not (a == False):",
    "Rewrite this sentence for a child: \"Precipitation is expected throughout the afternoon.\"",
    "Fix the spelling: \"Teh quick borwn fox jumpd over the lazy dog.\"",
]

# Prose the target writes for a general reader: explanations, descriptions, advice, stories, poems, comparisons and
# short rewrites, each template over topics of its own (this repository's text). The draft drafted prose far worse
# than code (benchmarks/FINDINGS.md, "Prose answers"), and the instructions above and the library's requests
# (``library_instructions``, below) ask mostly for code.
PROSE_TOPICS = {
    "Explain {} in simple words.": [
        "how the heart pumps blood", "why the ocean is salty", "how a volcano erupts", "what an earthquake is",
        "how electricity reaches a house", "how a compass works", "why leaves change colour in autumn",
        "how the internet carries a message", "what a calorie is", "how a solar panel makes electricity",
        "why we dream", "how money is printed and controlled", "what the immune system does", "how tides work",
        "how a camera takes a picture", "what DNA is", "how clouds form", "why metal feels cold",
        "how a lock and key work", "how yeast works", "what a glacier is",
        "how a microwave oven heats food", "why we have leap years", "how birds migrate", "what an eclipse is",
        "how a thermometer works", "what a tsunami is", "how recycling plastic works", "why onions make you cry",
    ],
    "Describe {} in a few sentences.": [
        "a busy market in the morning", "a quiet library", "a snowy village", "a summer storm",
        "the view from a tall building", "a walk along a river", "an old train station", "a garden in spring",
        "a crowded football stadium", "a desert at sunset", "a small fishing harbour", "a kitchen before dinner",
        "how cheese is made", "how paper is recycled", "how a letter travels by post", "how glass is made",
        "a rainy afternoon in a café", "a mountain lake at dawn", "a school playground at noon", "a night sky far from town",
        "how chocolate is made", "how a house is built", "how wool becomes a jumper", "how coffee is grown",
    ],
    "Give three tips for {}.": [
        "staying focused while studying", "keeping a houseplant alive", "running a first marathon",
        "saving money each month", "learning a new language", "giving a good speech", "cooking rice well",
        "making new friends in a new city", "writing a clear email", "taking better photos with a phone",
        "preparing for a job interview", "keeping a tidy desk", "travelling with little luggage",
        "reading more each year", "starting to run", "planning a birthday party", "keeping a journal",
        "drinking more water", "learning to swim as an adult", "working well in a team", "growing tomatoes",
        "staying calm before an exam", "choosing a good book", "writing a short story", "making a budget",
    ],
    "What are the main causes of {}?": [
        "air pollution in cities", "headaches", "forest fires", "floods", "stress at work", "rust on iron",
        "tooth decay", "rising house prices", "poor sleep", "the decline of bees", "back pain", "desert growth",
        "noise in cities", "coral reef damage", "loneliness in old age", "food prices going up",
    ],
    "Write a short story about {}.": [
        "a girl who builds a boat", "an old clock that stops", "a cat who guards a bakery",
        "two friends lost in a museum", "a farmer and a talking crow", "a child who plants a tree",
        "a musician who loses her voice", "a mouse in a space station", "a postman on his last day",
        "a king who cannot sleep", "a lost umbrella", "a boy who talks to the sea", "a robot who wants a garden",
        "an owl who cannot fly", "a baker who wins a prize", "a painter who paints only doors",
    ],
    "Write a short poem about {}.": [
        "the rain", "a mountain", "a train journey", "friendship", "the first snow", "an old bridge",
        "the wind", "a candle", "morning coffee", "the stars", "the river", "an empty beach", "a grandmother's kitchen",
        "spring flowers", "a rainy Sunday", "the city park",
    ],
    "List four ways to {}.": [
        "stay healthy in winter", "use less water", "learn faster", "make a room feel bigger",
        "help a neighbour", "reduce food waste", "get more exercise without a gym", "keep children busy on a rainy day",
        "improve your handwriting", "make a long drive pleasant", "remember names", "spend less time on the phone",
        "welcome a new colleague", "make a garden friendly to birds",
    ],
    "What is the difference between {}?": [
        "a lake and a pond", "a crocodile and an alligator", "a comet and an asteroid", "a town and a city",
        "baking and roasting", "a loan and a grant", "a novel and a short story", "an ocean and a sea",
        "speed and velocity", "a democracy and a monarchy", "a frog and a toad", "a hurricane and a tornado",
        "a doctor and a nurse", "a violin and a cello", "a river and a stream", "weather and a season",
    ],
    "Explain to a ten-year-old {}.": [
        "how plants drink water", "why we need sleep", "what a fraction is", "how a seed grows", "why the Moon has phases",
        "what an election is", "how a battery stores energy", "why ice floats", "how a bridge holds up cars",
        "why we have different time zones", "what a map scale means", "how fish breathe underwater",
    ],
}
PROSE_REWRITES = [
    "Make this message more polite: \"Move your car, it is blocking mine.\"",
    "Make this message more polite: \"Answer my question now.\"",
    "Rewrite in the past tense: \"The dog runs across the field and barks at the birds.\"",
    "Rewrite in the past tense: \"We open the window and listen to the rain.\"",
    "Translate into French: \"The library closes at six in the evening.\"",
    "Translate into Spanish: \"My brother works in a hospital.\"",
    "Translate into Italian: \"The train leaves in ten minutes.\"",
    "Translate into Portuguese: \"Thank you for your help yesterday.\"",
    "Correct the grammar: \"They was going to the shop when it start to rain.\"",
    "Summarise in one sentence: \"The town council met on Monday and agreed to build a new park next to the school, "
    "which will open next summer.\"",
    "Make this sentence shorter: \"Due to the fact that it was raining, we decided that we would stay inside.\"",
    "Rewrite this sentence for a child: \"The museum exhibits artefacts from ancient civilisations.\"",
]


def prose() -> list[str]:
    """The prose requests, template by template."""
    return [template.format(topic) for template, topics in PROSE_TOPICS.items() for topic in topics] + PROSE_REWRITES


def instructions() -> list[str]:
    """Every instruction, in a fixed order."""
    code = [f"Write a {CODE_LANGUAGES[i % len(CODE_LANGUAGES)]} function that {task}."
            for i, task in enumerate(CODE_TASKS)]
    explain = [f"Explain {concept} in a short paragraph." for concept in CONCEPTS]
    return code + explain + GENERAL + REWRITES + MORE_CODE + MORE_GENERAL + MORE_REWRITES + prose()


# A docstring's imperative first word, as the third person a request reads with ("a function that returns ...").
_VERBS = {
    "Return": "returns", "Compute": "computes", "Convert": "converts", "Check": "checks", "Create": "creates",
    "Find": "finds", "Split": "splits", "Remove": "removes", "Count": "counts", "Read": "reads", "Write": "writes",
    "Parse": "parses", "Format": "formats", "Build": "builds", "Encode": "encodes", "Decode": "decodes",
    "Test": "tests", "Make": "makes", "Get": "gets", "Calculate": "calculates", "Generate": "generates",
    "Replace": "replaces", "Join": "joins", "Copy": "copies", "Sort": "sorts", "Escape": "escapes",
    "Normalize": "normalizes", "Insert": "inserts", "Add": "adds",
}
_SKIP = {"test", "tests", "idlelib", "lib2to3", "site-packages", "turtledemo", "ensurepip"}
_DANGLING = {"of", "by", "to", "and", "the", "a", "an", "for", "in", "with", "or"}
_TEMPLATES = [
    "Write a Python function that {task}.",
    "Write a Python function that {task}, with type hints and a docstring.",
    "How would I write code that {task}? Show it in Python.",
    "Write a JavaScript function that {task}.",
    "Write a small Python script that {task} and prints the result.",
]


def library_tasks() -> list[str]:
    """Every task read off the standard library: a public function's docstring whose first sentence starts with
    an imperative verb and reads as plain words (no code), as "returns ...", sorted and without repeats."""
    return list(_library_tasks())


@functools.cache
def _library_tasks() -> tuple[str, ...]:
    """``library_tasks``, read once a process: parsing the standard library takes 2.5-3 s."""
    tasks = set()
    for sentence in _first_sentences(_stdlib_trees(private=True), (ast.FunctionDef,)):
        words = sentence.split()
        if not 4 <= len(words) <= 16 or words[0] not in _VERBS or words[-1].lower() in _DANGLING:
            continue
        if re.search(r"[`'\"\\(){}\[\]<>:;=*]|self|\bthe given\b", sentence):
            continue
        tasks.add(" ".join([_VERBS[words[0]], *words[1:]]))
    return tuple(sorted(tasks))


def _stdlib_trees(private: bool):
    """(path relative to the standard library, syntax tree) of its modules, tests and tools aside; with ``private``,
    modules whose path has a part starting with "_" too."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        parts = path.relative_to(stdlib).parts
        if _SKIP & set(parts) or (not private and any(part.startswith("_") for part in parts)):
            continue
        try:
            yield path.relative_to(stdlib), ast.parse(path.read_text(errors="replace"))
        except (SyntaxError, ValueError):
            continue


def _first_sentences(trees, kinds: tuple):
    """The first sentence (without its full stop) of every public ``kinds`` node's docstring in ``trees``."""
    for _, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, kinds) and not node.name.startswith("_") and (doc := ast.get_docstring(node)):
                yield doc.strip().split("\n\n")[0].replace("\n", " ").strip().split(". ")[0].rstrip(".")


def library_instructions(count: int) -> list[str]:
    """``count`` coding requests made from ``library_tasks()`` (all: -1), spread evenly over them, each in one of a
    few phrasings in turn."""
    tasks = library_tasks()
    count = len(tasks) if count < 0 else min(count, len(tasks))
    picked = [tasks[k * len(tasks) // count] for k in range(count)] if count else []
    return [_TEMPLATES[k % len(_TEMPLATES)].format(task=task) for k, task in enumerate(picked)]


# The corpus's further requests (``corpus.py``): prose over subjects, the standard library's modules, and rewrites of
# its docstrings' sentences. Subjects and templates are this repository's text; modules and sentences are read off
# Python's standard library (Python Software Foundation License 2.0).
SUBJECTS = [
    "volcanoes", "honeybees", "the printing press", "electric cars", "public libraries", "the Roman aqueducts",
    "coral reefs", "the Silk Road", "lighthouses", "the bicycle", "tea", "the telescope", "penguins", "windmills",
    "the Olympic Games", "maps", "the violin", "recycling", "rainforests", "the steam engine", "sourdough",
    "bridges", "the compass", "glaciers", "owls", "the alphabet", "clocks", "the Great Wall of China", "deserts",
    "vaccination", "trains", "the piano", "chess", "origami", "the postal service", "satellites", "mushrooms",
    "the human eye", "octopuses", "the periodic table", "paper", "castles", "the Amazon river", "jazz", "kites",
    "the Sahara", "submarines", "whales", "wind power", "umbrellas", "the guitar", "dinosaurs", "the Moon landing",
    "libraries in the Middle Ages", "rice farming", "the Eiffel Tower", "newspapers", "elephants", "hot-air balloons",
    "the water wheel", "glass", "ancient Egypt", "the radio", "cotton", "earthquakes", "the human skeleton",
    "sleep", "bees and flowers", "the Arctic", "the internet", "street markets", "board games", "museums",
    "the metric system", "sundials", "the microscope", "pottery", "sharks", "the Nile", "bamboo", "compost",
    "public parks", "snow", "thunderstorms", "the post box", "typewriters", "salt", "the calendar", "maple syrup",
    "the seasons", "marathons", "ants", "puzzles", "wool", "the bus", "canals", "mountains", "honey", "soap",
    "the spinning wheel", "cartoons", "fireworks", "photography", "the orchestra", "the atom", "bats", "fungi",
    "the tomato", "solar energy", "the kilogram", "orange trees", "carnivals", "the harbour", "tunnels",
    "the tortoise", "lakes", "the hedgehog", "pencils", "the bread oven", "astronauts", "knitting", "the zebra",
    "the rain gauge", "the wheel", "dolphins", "handwriting", "the football", "the ice age", "caves", "the fox",
    "gardening", "vinegar", "the helicopter", "the wolf", "the sparrow", "coffee", "pyramids", "the potato",
    "sailing ships", "the lemon", "the bicycle helmet", "rivers", "the library card", "tides", "olive oil",
]
SUBJECT_TEMPLATES = [
    "Write a short paragraph about {}.", "Give three interesting facts about {}.", "Explain {} to a ten-year-old.",
    "Write a short poem about {}.", "Describe {} in a few sentences.", "What are the good and bad sides of {}?",
    "Write a short story in which {} matter to the plot.", "Summarise the history of {} in a few sentences.",
    "Write a short letter to a friend about {}.", "Write a two-minute speech about {}.",
    "List five questions a student might ask about {}, with short answers.", "Write a short news report about {}.",
    "Compare {} with something similar, in a short paragraph.", "Write a short dialogue between two people about {}.",
    "Write a short advertisement about {}.", "Explain why {} matter to people, in a few sentences.",
]
MODULE_TEMPLATES = [
    "What is Python's {} module for? Show a short example.",
    "Write a short Python example that uses the {} module and explain it.",
]
SENTENCE_TEMPLATES = [
    "Rewrite this sentence in simpler words: \"{}\"",
    "Translate into French: \"{}\"",
    "Write a Python function whose docstring says: \"{}\"",
]


def subject_requests() -> list[str]:
    return [template.format(subject) for template in SUBJECT_TEMPLATES for subject in SUBJECTS]


def module_requests() -> list[str]:
    """Two requests about every public standard-library module that has a docstring."""
    names = []
    for relative, tree in _stdlib_trees(private=False):
        if ast.get_docstring(tree):
            dotted = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
            names.append(dotted)
    return [template.format(name) for template in MODULE_TEMPLATES for name in sorted(set(names))]


def sentence_requests() -> list[str]:
    """Docstrings' first sentences that read as plain words (6 to 20 words, no code), each in one template in turn."""
    sentences = set()
    for sentence in _first_sentences(_stdlib_trees(private=False), (ast.FunctionDef, ast.ClassDef)):
        words = sentence.split()
        if not 6 <= len(words) <= 20 or not words[0][:1].isupper() or words[-1].lower() in _DANGLING:
            continue
        if re.search(r"[`'\"\\(){}\[\]<>:;=*_]|self|\bthe given\b", sentence):
            continue
        sentences.add(sentence + ".")
    return [SENTENCE_TEMPLATES[k % len(SENTENCE_TEMPLATES)].format(s) for k, s in enumerate(sorted(sentences))]


MORE_TEMPLATES = [
    "Explain step by step how to write code that {task}, then show it in Python.",
    "Write a Python function that {task}, and a short pytest test for it.",
]


def more_library_instructions() -> list[str]:
    """Every ``library_tasks()`` task in ``MORE_TEMPLATES``' phrasings."""
    return [template.format(task=task) for template in MORE_TEMPLATES for task in library_tasks()]
